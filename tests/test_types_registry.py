"""The method registry, the version constants, import hygiene and generated-code freshness."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

import mcpkit.types as types
from mcpkit.types import versions
from mcpkit.types.methods import METHODS, MethodInfo, method_info

ROOT = Path(__file__).resolve().parents[1]
SPEC = ROOT.parent / "shared/spec"
ALL_REVISIONS = frozenset(versions.SUPPORTED_VERSIONS)


def test_version_constants() -> None:
    assert versions.HANDSHAKE_VERSIONS == ("2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25")
    assert versions.PER_REQUEST_VERSIONS == ("2026-07-28",)
    assert versions.LATEST_PROTOCOL_VERSION == "2026-07-28"
    assert versions.LATEST_HANDSHAKE_VERSION == "2025-11-25"
    assert (*versions.HANDSHAKE_VERSIONS, "2026-07-28") == versions.SUPPORTED_VERSIONS
    assert types.LATEST_PROTOCOL_VERSION == versions.LATEST_PROTOCOL_VERSION


def test_tools_call() -> None:
    info = method_info("tools/call")
    assert info == MethodInfo(
        method="tools/call",
        kind="request",
        direction="client_to_server",
        params_type="CallToolRequestParams",
        result_type="CallToolResult",
        capability=("tools",),
        revisions=ALL_REVISIONS,
    )


@pytest.mark.parametrize(
    ("method", "direction", "capability"),
    [
        ("sampling/createMessage", "server_to_client", ("sampling",)),
        ("elicitation/create", "server_to_client", ("elicitation",)),
        ("roots/list", "server_to_client", ("roots",)),
        ("ping", "both", None),
        ("notifications/cancelled", "both", None),
        ("notifications/progress", "both", None),
        ("resources/subscribe", "client_to_server", ("resources", "subscribe")),
        ("logging/setLevel", "client_to_server", ("logging",)),
        ("completion/complete", "client_to_server", ("completions",)),
        ("prompts/get", "client_to_server", ("prompts",)),
        ("prompts/list", "client_to_server", ("prompts",)),
        ("notifications/roots/list_changed", "client_to_server", ("roots", "listChanged")),
        ("notifications/tools/list_changed", "server_to_client", ("tools", "listChanged")),
        ("notifications/message", "server_to_client", ("logging",)),
        ("server/discover", "client_to_server", None),
    ],
)
def test_direction_and_capability(
    method: str, direction: str, capability: tuple[str, ...] | None
) -> None:
    info = method_info(method)
    assert info is not None
    assert (info.direction, info.capability) == (direction, capability)


def test_kinds() -> None:
    assert METHODS["ping"].kind == "request"
    assert METHODS["ping"].result_type == "EmptyResult"
    assert METHODS["notifications/progress"].kind == "notification"
    assert METHODS["notifications/progress"].result_type is None


def test_revisions() -> None:
    assert METHODS["server/discover"].revisions == {"2026-07-28"}
    assert METHODS["subscriptions/listen"].revisions == {"2026-07-28"}
    assert METHODS["initialize"].revisions == set(versions.HANDSHAKE_VERSIONS)
    assert METHODS["ping"].revisions == set(versions.HANDSHAKE_VERSIONS)
    assert METHODS["elicitation/create"].revisions == {"2025-06-18", "2025-11-25"}
    assert {m for m in METHODS if m.startswith("tasks/")} == {
        "tasks/cancel",
        "tasks/get",
        "tasks/list",
        "tasks/result",
    }
    assert all(METHODS[m].revisions == {"2025-11-25"} for m in METHODS if m.startswith("tasks/"))
    assert all(info.revisions <= ALL_REVISIONS and info.revisions for info in METHODS.values())


def test_unknown_methods() -> None:
    assert method_info("tools/explode") is None


@pytest.mark.parametrize("method", sorted(METHODS))
def test_entries_are_consistent_and_name_real_types(method: str) -> None:
    info = METHODS[method]
    assert info.method == method
    assert (info.result_type is None) == (info.kind == "notification")
    for name in (info.params_type, info.result_type):
        assert name is None or getattr(types, name, None) is not None, name


def run_fresh(code: str) -> str:
    done = subprocess.run(
        [sys.executable, "-c", textwrap.dedent(code)],
        capture_output=True,
        text=True,
        check=True,
        cwd=ROOT,
    )
    return done.stdout.strip()


def test_registry_and_versions_import_no_pydantic() -> None:
    out = run_fresh(
        """
        import sys
        import mcpkit.types.methods, mcpkit.types.versions
        import mcpkit.types
        print(sorted(m for m in sys.modules if m.split(".")[0] in ("pydantic", "pydantic_core")))
        """
    )
    assert out == "[]"


def test_models_and_revisions_load_on_first_use() -> None:
    out = run_fresh(
        """
        import sys
        import mcpkit.types as t
        assert "pydantic" not in sys.modules
        print(t.CallToolResult.__module__, t.rev_2024_11_05.PROTOCOL_VERSION)
        from mcpkit.types import rev_2025_11_25, MCPModel
        print(issubclass(rev_2025_11_25.Tool, MCPModel))
        """
    )
    assert out.split() == ["mcpkit.types._neutral", "2024-11-05", "True"]


def test_generated_modules_are_up_to_date(tmp_path: Path) -> None:
    if not (SPEC / "schema").is_dir():
        message = f"the specification is absent ({SPEC}); shared/ must sit beside the checkout"
        if os.environ.get("CI"):
            pytest.fail(message)
        pytest.skip(message)
    subprocess.run(
        [
            sys.executable,
            str(ROOT / "scripts/gen_types.py"),
            "--schema-dir",
            str(SPEC / "schema"),
            "--out-dir",
            str(tmp_path),
        ],
        check=True,
        capture_output=True,
        cwd=ROOT,
    )
    generated = sorted(p.name for p in tmp_path.glob("*.py"))
    assert len(generated) == 8
    stale = [
        name
        for name in generated
        if (tmp_path / name).read_text() != (ROOT / "src/mcpkit/types" / name).read_text()
    ]
    assert stale == [], "run .venv/bin/python scripts/gen_types.py"
