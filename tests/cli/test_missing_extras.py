"""A missing optional dependency names the extra to install, from the CLI and from the library.

Each case runs a real interpreter in which the module cannot be imported (tests/cli/blocked's
sitecustomize refuses it, as an interpreter without the package would), no mocks."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

BLOCKER = Path(__file__).parent / "blocked"
MCPKIT = [sys.executable, "-m", "mcpkit"]


def without(modules: str, argv: list[str], cwd: Path) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": str(BLOCKER), "MCPKIT_TEST_BLOCK": modules}
    env.pop("ANTHROPIC_API_KEY", None)
    return subprocess.run(
        argv,
        check=False,
        env=env,
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=60,
        stdin=subprocess.DEVNULL,
    )


def test_the_blocker_really_hides_the_module(tmp_path: Path) -> None:
    out = without("uvicorn", [sys.executable, "-c", "import uvicorn"], tmp_path)
    assert out.returncode == 1 and "No module named 'uvicorn'" in out.stderr


@pytest.mark.parametrize(
    ("blocked", "argv", "extra"),
    [
        ("uvicorn", ["run", "server.py", "--transport", "http", "--port", "1"], "http"),
        ("httpx", ["list", "http://127.0.0.1:1/mcp"], "http"),
        ("openai", ["chat", "--provider", "openai", "--config", "mcp.json"], "openai"),
        ("anthropic", ["chat", "--provider", "anthropic", "--config", "mcp.json"], "anthropic"),
    ],
)
def test_the_cli_names_the_pip_install(
    tmp_path: Path, blocked: str, argv: list[str], extra: str
) -> None:
    (tmp_path / "server.py").write_text("from mcpkit import Server\nserver = Server('s')\n")
    (tmp_path / "mcp.json").write_text('{"mcpServers": {}}')
    out = without(blocked, [*MCPKIT, *argv], tmp_path)
    assert out.returncode == 2, out.stderr
    assert f"pip install 'mcpkit[{extra}]'" in out.stderr
    assert f"{blocked} is not installed" in out.stderr
    assert "unexpected error" not in out.stderr and "Traceback" not in out.stderr


LIBRARY = """
import asyncio
from mcpkit import Client
from mcpkit.errors import MissingExtra

async def main():
    try:
        async with Client("http://127.0.0.1:1/mcp"):
            pass
    except MissingExtra as exc:
        assert isinstance(exc, ImportError) and exc.extra == "http"
        print(exc)

asyncio.run(main())
try:
    from mcpkit.host.providers import OpenAIProvider
    OpenAIProvider(api_key="x")
except MissingExtra as exc:
    print(exc)
try:
    from mcpkit import Server
    Server("s").run(transport="http", port=1)
except MissingExtra as exc:
    print(exc)
"""


def test_the_library_raises_missing_extra_an_import_error(tmp_path: Path) -> None:
    out = without("httpx,openai,uvicorn", [sys.executable, "-c", LIBRARY], tmp_path)
    assert out.returncode == 0, out.stderr
    assert out.stdout.splitlines() == [
        "httpx is not installed; it comes with mcpkit's 'http' extra: pip install 'mcpkit[http]'",
        "openai is not installed; it comes with mcpkit's 'openai' extra: "
        "pip install 'mcpkit[openai]'",
        "uvicorn is not installed; it comes with mcpkit's 'http' extra: pip install 'mcpkit[http]'",
    ]


def test_another_missing_module_is_not_blamed_on_an_extra(tmp_path: Path) -> None:
    (tmp_path / "server.py").write_text("import not_a_module_anywhere\n")
    out = without("", [*MCPKIT, "run", "server.py"], tmp_path)
    assert "pip install 'mcpkit[" not in out.stderr and "not_a_module_anywhere" in out.stderr
