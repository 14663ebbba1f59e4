"""A FastMCP 4.1.6 server with an MCP Apps view, declared with FastMCP's own app helpers
(run with tests/peers.py: fastmcp_python): `board` renders in `ui://fm/board`, `nudge` is for
views only, `secret` for the model only. `count://fm` reads how often each tool ran."""

from collections import Counter

from fastmcp import FastMCP
from fastmcp.apps.config import AppConfig, ResourceCSP

mcp = FastMCP("fm")
calls: Counter = Counter()


@mcp.resource(
    "ui://fm/board",
    app=AppConfig(csp=ResourceCSP(connect_domains=["https://api.fm.example"]), prefers_border=True),
)
def board() -> str:
    return "<!DOCTYPE html><html><body>fastmcp board</body></html>"


@mcp.resource("count://fm")
def count() -> dict:
    return dict(calls)


@mcp.tool(app=AppConfig(resource_uri="ui://fm/board"))
def show() -> str:
    calls["show"] += 1
    return "fm: board shown"


@mcp.tool(app=AppConfig(visibility=["app"]))
def nudge() -> str:
    calls["nudge"] += 1
    return "fm: nudged"


@mcp.tool(app=AppConfig(visibility=["model"]))
def secret() -> str:
    calls["secret"] += 1
    return "fm: secret"


if __name__ == "__main__":
    mcp.run(show_banner=False)
