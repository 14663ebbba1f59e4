"""A small MCP server over stdio: `python examples/demo_server.py`."""

from mcpkit import Server

server = Server("demo", version="1.0.0", instructions="Tools for arithmetic and greetings.")


@server.tool()
def add(a: int, b: int) -> int:
    """Add two integers."""
    return a + b


@server.tool()
def greet(name: str, punctuation: str = "!") -> str:
    """Greet someone by name."""
    return f"Hello, {name}{punctuation}"


@server.tool()
async def countdown(start: int) -> list[str]:
    """Count down to zero."""
    return [str(n) for n in range(start, -1, -1)]


if __name__ == "__main__":
    server.run()
