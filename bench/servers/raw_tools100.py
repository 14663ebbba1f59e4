"""Raw reference for W5: the 100 tools of many_tools.py with hand-written JSON schemas (the
shapes mcpkit derives from the same signatures), for `tools/list`. The listing is a dict built
once at start and serialized with orjson for every request."""

import asyncio

from many_tools import specs
from raw_server import Tools, serve

STRING, INTEGER, NUMBER = {"type": "string"}, {"type": "integer"}, {"type": "number"}
BOOLEAN = {"type": "boolean"}
SCHEMAS = [
    {
        "type": "object",
        "properties": {"query": STRING, "limit": {**INTEGER, "default": 10}},
        "required": ["query"],
    },
    {
        "type": "object",
        "properties": {"city": STRING, "days": INTEGER, "metric": {**BOOLEAN, "default": True}},
        "required": ["city", "days"],
    },
    {
        "type": "object",
        "properties": {"amount": NUMBER, "currency": STRING},
        "required": ["amount", "currency"],
    },
    {
        "type": "object",
        "properties": {
            "path": STRING,
            "pattern": STRING,
            "recursive": {**BOOLEAN, "default": False},
        },
        "required": ["path", "pattern"],
    },
]


def answer(arguments: dict) -> dict:
    return {"content": [{"type": "text", "text": str(arguments)}], "isError": False}


TOOLS: Tools = {
    name: ({"name": name, "description": description, "inputSchema": SCHEMAS[kind]}, answer)
    for name, description, kind in specs()
}

if __name__ == "__main__":
    asyncio.run(serve(TOOLS))
