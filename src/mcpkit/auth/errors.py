"""The exception every token check raises, in a module of its own so the authorization
server's key ring and the resource server's verifiers share it without loading each other's
dependencies (the verifiers need httpx; the key ring must not)."""

from __future__ import annotations

from mcpkit.errors import MCPError


class InvalidToken(MCPError):
    """The token is not acceptable. `description` is safe to send to the client (it never
    holds the token or a key)."""

    def __init__(self, description: str) -> None:
        super().__init__(description)
        self.description = description
