"""A stdio server that attacks the inspector's page: every text it sends (its name,
instructions, a tool's description and title, results, a resource link, a prompt, a log line)
carries markup that would run if the page rendered it as HTML, each setting `window.pwned`;
links are `javascript:` URLs. The page must show all of it as text."""

from __future__ import annotations

from mcpkit import Context, Server

MARKUP = (
    "<script>window.pwned='script'</script>"
    "<img src=x onerror=\"window.pwned='img'\">"
    "<a href=\"javascript:window.pwned='link'\">click</a>"
)
server = Server("hostile" + MARKUP, version="1.0.0", instructions="Instructions " + MARKUP)


@server.tool(description="Echo. " + MARKUP)
async def echo(text: str, ctx: Context) -> list[object]:
    """(description above)"""
    await ctx.warning("log " + MARKUP)
    link = {"type": "resource_link", "uri": "javascript:window.pwned='uri'", "name": MARKUP}
    embedded = {
        "type": "resource",
        "resource": {"uri": "javascript:window.pwned='embedded'", "text": MARKUP},
    }
    return ["result " + MARKUP + text, link, embedded]


@server.prompt(description="A prompt " + MARKUP)
def attack(topic: str) -> str:
    """(description above)"""
    return "prompt " + MARKUP + topic


if __name__ == "__main__":
    server.run()
