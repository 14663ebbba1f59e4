"""Reading the import graph of src/ from the source (for the layout tests): every import a
module makes, at the top, under `if TYPE_CHECKING:` and inside functions alike."""

from __future__ import annotations

import ast
from pathlib import Path

SRC = Path(__file__).resolve().parent.parent / "src"


def module_name(path: Path) -> str:
    parts = list(path.relative_to(SRC).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def package_of(path: Path) -> str:
    """The package relative imports in `path` start from."""
    name = module_name(path)
    return name if path.name == "__init__.py" else name.rpartition(".")[0]


def imports_of(
    source: str, package: str, known: set[str] | frozenset[str] = frozenset()
) -> set[str]:
    """Every module a source in `package` imports, absolute. `from p import m` counts p.m when
    that is one of the `known` modules, else p (a name from p's namespace); without `known`
    it counts both (either may be meant)."""
    found: set[str] = set()
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join([*anchor, base] if base else anchor)
            for alias in node.names:
                submodule = f"{base}.{alias.name}"
                if submodule in known:
                    found.add(submodule)
                elif known:
                    found.add(base)
                else:
                    found.update((base, submodule))
    return found


def modules() -> dict[str, Path]:
    return {module_name(path): path for path in sorted(SRC.rglob("*.py"))}


def import_graph() -> dict[str, set[str]]:
    """Module -> the mcpkit modules it imports (see `imports_of`)."""
    known = modules()
    names = set(known)
    return {
        name: {m for m in imports_of(path.read_text(), package_of(path), names) if m in names}
        - {name}
        for name, path in known.items()
    }
