"""W4 server on mcpkit: the echo tool next to `order`, a tool taking nested pydantic models
and returning one (structured output). Speaks MCP over stdio."""

from order_models import Customer, Item, Receipt

from mcpkit import Server

server = Server("bench-order", version="1.0.0")


@server.tool()
def echo(text: str) -> str:
    """Echo the text back."""
    return text


@server.tool()
def order(customer: Customer, items: list[Item]) -> Receipt:
    """Price an order."""
    total = sum(item.quantity * item.price for item in items)
    count = sum(item.quantity for item in items)
    return Receipt(customer=customer.name, item_count=count, total=round(total, 2))


if __name__ == "__main__":
    server.run()  # stdio
