"""The module policy of CONTRIBUTING.md: a module whose name starts with an underscore is
private to its package, imported only by its own package's modules (type-hint-only imports
and imports inside functions count too)."""

from __future__ import annotations

from tests.imports import SRC, imports_of, module_name, package_of


def private_owner(module: str) -> str | None:
    """The package a private module belongs to (`a.b._c.d` -> `a.b`), or None if public."""
    parts = module.split(".")
    for i, part in enumerate(parts):
        if part.startswith("_") and not part.startswith("__"):
            return ".".join(parts[:i])
    return None


def violations(importer: str, package: str, source: str) -> list[str]:
    found = []
    for module in sorted(imports_of(source, package)):
        owner = private_owner(module)
        if owner is None or not module.startswith("mcpkit."):
            continue
        if importer != owner and not importer.startswith(owner + "."):
            found.append(f"{importer} imports {module}, private to {owner}")
    return found


def test_private_modules_are_imported_only_inside_their_package() -> None:
    found = []
    for path in sorted(SRC.rglob("*.py")):
        found += violations(module_name(path), package_of(path), path.read_text())
    assert found == []


def test_the_check_sees_imports_across_packages_and_allows_them_within() -> None:
    source = (
        "from typing import TYPE_CHECKING\n"
        "if TYPE_CHECKING:\n    from mcpkit.server._run import Serving\n"
        "def later():\n    from ..client import _core\n"
        "from . import _serve_module\n"
    )
    assert violations("mcpkit.cli.probe", "mcpkit.cli", source) == [
        "mcpkit.cli.probe imports mcpkit.client._core, private to mcpkit.client",
        "mcpkit.cli.probe imports mcpkit.server._run, private to mcpkit.server",
        "mcpkit.cli.probe imports mcpkit.server._run.Serving, private to mcpkit.server",
    ]
