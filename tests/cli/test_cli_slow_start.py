"""`mcpkit list` on a stdio server that starts slower than the era probe waits (issue 22,
item 1): the official SDK's dual-era server, started 4 s late (the default probe waits 3 s),
is listed in the 2026-07-28 era instead of failing with exit 4 (-32022 on initialize)."""

from __future__ import annotations

import json
import shlex
import sys

from tests.cli.test_cli import ROOT, mcpkit

SLOW = ROOT / "tests" / "client" / "slow_start.py"
OFFICIAL = ROOT / "tests" / "fixtures" / "official_server.py"


def test_list_on_a_slow_starting_official_server() -> None:
    command = shlex.join([sys.executable, str(SLOW), "4", str(OFFICIAL)])
    listed = mcpkit("list", command, "--json", timeout=60)
    assert listed.returncode == 0, listed.stderr
    assert [tool["name"] for tool in json.loads(listed.stdout)["tools"]] == ["add", "echo"]
