"""An official SDK (mcp 2.3.0) stdio server, served at 2025-11-25, whose tool asks its client
mid-call: a sampling request, then a form elicitation."""

from __future__ import annotations

import warnings

from mcp import types
from mcp.server.mcpserver import Context, MCPServer

warnings.simplefilter("ignore")
server = MCPServer("official-asking", log_level="CRITICAL")


@server.tool()
async def ask(question: str, ctx: Context) -> str:
    """Samples the client's model, then asks the user for a name."""
    message = types.SamplingMessage(
        role="user", content=types.TextContent(type="text", text=question)
    )
    sampled = await ctx.session.create_message([message], max_tokens=10)
    schema = {"type": "object", "properties": {"name": {"type": "string"}}}
    answer = await ctx.session.elicit("Your name?", schema)  # type: ignore[arg-type]
    name = (answer.content or {}).get("name")
    return f"{sampled.content.text} / {answer.action}:{name}"  # type: ignore[union-attr]


if __name__ == "__main__":
    server.run()
