"""`--log-level LEVEL` on the talking commands (the MCP Inspector CLI's logging/setLevel):
the server's log messages at that level and above on stderr, in both eras."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.cli.test_output import mcpkit

SERVER = """\
from mcpkit import Server
from mcpkit.server.context import Context

app = Server("noisy")


@app.tool()
async def work(ctx: Context) -> str:
    await ctx.debug("a detail")
    await ctx.log("warning", {"disk": "almost full"}, logger="store")
    return "done"
"""


@pytest.mark.parametrize("mode", ["handshake", "per-request"])
@pytest.mark.timeout(180)  # several commands, each starting a server
def test_log_messages_at_the_level_asked_go_to_stderr(tmp_path: Path, mode: str) -> None:
    (tmp_path / "server.py").write_text(SERVER)
    warned = mcpkit(
        "call", "server.py", "work", "--log-level", "warning", "--mode", mode, cwd=tmp_path
    )
    assert (warned.returncode, warned.stdout) == (0, "done\n"), warned.stderr
    assert '[warning] store: {"disk":"almost full"}' in warned.stderr
    assert "a detail" not in warned.stderr
    everything = mcpkit(
        "call", "server.py", "work", "--log-level", "debug", "--mode", mode, cwd=tmp_path
    )
    assert "[debug] a detail" in everything.stderr
    quiet = mcpkit("call", "server.py", "work", "--mode", mode, cwd=tmp_path)
    assert quiet.stdout == "done\n" and "[warning]" not in quiet.stderr


def test_an_unknown_level_is_a_usage_error(tmp_path: Path) -> None:
    done = mcpkit("list", "server.py", "--log-level", "loud", cwd=tmp_path)
    assert done.returncode == 2 and "invalid choice" in done.stderr
