"""A stdio server with an MCP Apps view, for the host's Apps tests:
`python tests/host/apps_server.py NAME`.

`show` renders in `ui://NAME/view` (model and app); `app_only` is for views only, `model_only`
for the model only, `plain` declares nothing (both); `NAME_only` exists on this server alone;
`crash` (app) kills the server mid-call.
Every tool that runs counts its call, and `count://NAME` reads the counts: a refused call
must leave them as they were."""

from __future__ import annotations

import os
import sys
from collections import Counter

from mcpkit import Server

NAME = sys.argv[1]
server = Server(NAME)
calls: Counter[str] = Counter()


@server.app(f"ui://{NAME}/view", csp={"connect_domains": ["https://api.example.com"]})
def view() -> str:
    return f"<!DOCTYPE html><html><body>view of {NAME}</body></html>"


@server.resource(f"count://{NAME}")
def count() -> dict[str, int]:
    return dict(calls)


@server.tool(app=f"ui://{NAME}/view")
def show(city: str = "Paris") -> str:
    calls["show"] += 1
    return f"{NAME}: sunny in {city}"


@server.tool(visibility=["app"])
def app_only() -> str:
    calls["app_only"] += 1
    return f"{NAME}: app_only ran"


@server.tool(visibility=["model"])
def model_only() -> str:
    calls["model_only"] += 1
    return f"{NAME}: model_only ran"


@server.tool()
def plain() -> str:
    calls["plain"] += 1
    return f"{NAME}: plain ran"


def only_here() -> str:
    calls[f"{NAME}_only"] += 1
    return f"{NAME}: only here"


server.add_tool(only_here, name=f"{NAME}_only", visibility=["model", "app"])


@server.tool(visibility=["app"])
def crash() -> str:
    """Die mid-call, leaving a secret on stderr (which must not reach the view)."""
    sys.stderr.write("SECRET-STDERR-TOKEN\n")
    sys.stderr.flush()
    os._exit(3)


if __name__ == "__main__":
    server.run()
