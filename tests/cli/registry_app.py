"""A server to describe for the MCP Registry."""

from mcpkit import Server

server = Server(
    "weather",
    "1.2.0",
    title="Weather",
    instructions="Forecasts and alerts for any place on Earth.",
)


@server.tool()
def forecast(city: str) -> str:
    return f"sunny in {city}"
