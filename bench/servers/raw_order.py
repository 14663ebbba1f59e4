"""Raw reference for W4: echo next to `order`, answered from the plain argument dicts with no
validation at all (the floor under a framework's pydantic validation). The reply has the
shape the frameworks give: the receipt as JSON text and as structuredContent."""

import asyncio

import orjson
from raw_server import ECHO_TOOL, Tools, echo, serve

ORDER_TOOL = {
    "name": "order",
    "description": "Price an order.",
    "inputSchema": {
        "type": "object",
        "properties": {
            "customer": {"type": "object"},
            "items": {"type": "array", "items": {"type": "object"}},
        },
        "required": ["customer", "items"],
    },
}


def order(arguments: dict) -> dict:
    items = arguments["items"]
    receipt = {
        "customer": arguments["customer"]["name"],
        "item_count": sum(item["quantity"] for item in items),
        "total": round(sum(item["quantity"] * item["price"] for item in items), 2),
    }
    text = orjson.dumps(receipt).decode()
    return {"content": [{"type": "text", "text": text}], "structuredContent": receipt,
            "isError": False}  # fmt: skip


TOOLS: Tools = {"echo": (ECHO_TOOL, echo), "order": (ORDER_TOOL, order)}

if __name__ == "__main__":
    asyncio.run(serve(TOOLS))
