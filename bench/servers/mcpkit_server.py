"""Echo server on mcpkit (this repository), as its users write one. Speaks MCP over stdio."""

from mcpkit import Server

server = Server("bench-echo", version="1.0.0")


@server.tool()
def echo(text: str) -> str:
    """Echo the text back."""
    return text


if __name__ == "__main__":
    server.run()  # stdio
