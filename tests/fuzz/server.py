"""The server the stdio and HTTP fuzzers attack: a few tools of every shape, both eras."""

from mcpkit import Context, Server

server = Server("fuzz-target", version="1.0.0")


@server.tool()
def add(a: int, b: int) -> int:
    """Add two integers."""
    return a + b


@server.tool()
def echo(text: str) -> str:
    """Echo the text."""
    return text


@server.tool()
async def slow(ctx: Context, steps: int = 3) -> str:
    """Report progress a few times."""
    for step in range(min(steps, 5)):
        await ctx.report_progress(step + 1, 5)
    return "done"


@server.resource("memo://greeting")
def greeting() -> str:
    return "hello"


@server.prompt()
def ask(topic: str) -> str:
    """A prompt with one argument."""
    return f"Tell me about {topic}"


if __name__ == "__main__":
    server.run()
