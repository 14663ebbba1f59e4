"""A stdio server for the inspector page's forms and results: a tool taking a nested object
(an enum, a boolean with a default, an array), one returning audio, an http(s) resource link
and an embedded resource, one asking the user to open an https URL, and one adding a tool."""

from __future__ import annotations

import io
import wave
from typing import Literal

from pydantic import BaseModel

from mcpkit import Audio, Context, Server

server = Server("content", version="1.0.0")


class Address(BaseModel):
    street: str
    city: str


class Order(BaseModel):
    size: Literal["S", "M", "L"]
    gift: bool = False
    address: Address
    tags: list[str] = []


@server.tool()
def order(item: Order) -> str:
    """Place an order (a nested object)."""
    return f"{item.size} gift={item.gift} to {item.address.street}, {item.address.city} {item.tags}"


def _silence() -> bytes:
    out = io.BytesIO()
    with wave.open(out, "wb") as sound:
        sound.setnchannels(1)
        sound.setsampwidth(2)
        sound.setframerate(8000)
        sound.writeframes(b"\0\0" * 800)
    return out.getvalue()


@server.tool()
def media() -> list[object]:
    """Audio, a link and an embedded resource."""
    link = {"type": "resource_link", "uri": "https://example.com/guide", "name": "guide"}
    memo = {"type": "resource", "resource": {"uri": "memo://1", "text": "memo text"}}
    return [Audio(_silence(), mime_type="audio/wav"), link, memo]


@server.tool()
async def sign_in(ctx: Context) -> str:
    """Ask the user to open a page (URL elicitation)."""
    answer = await ctx.elicit_url("Sign in to continue", "https://example.com/login", "e1")
    return f"answer: {answer.action}"


@server.tool()
def grow() -> str:
    """Add a tool (the clients get tools/list_changed)."""

    def grown() -> str:
        """Added at run time."""
        return "grown"

    server.tool()(grown)
    return "added grown"


if __name__ == "__main__":
    server.run()
