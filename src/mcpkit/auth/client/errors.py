"""The one exception the OAuth client raises: which step failed, where, and what the server said.

It is also an `httpx.HTTPError`: the OAuth client runs inside httpx's auth flow, and the HTTP
transports turn an `httpx.HTTPError` raised while sending into a failed request (or a closed
connection) with this message, instead of a crash. Nothing secret goes into a message: no client
secret, authorization code, code verifier or token, only step, URL and the server's own words.
"""

from __future__ import annotations

from typing import Any, Literal

import httpx

from mcpkit.auth.client.wire import printable, text
from mcpkit.errors import MCPError

Step = Literal["discovery", "registration", "authorization", "token"]


class OAuthError(MCPError, httpx.HTTPError):
    """Authorization failed at `step` ("discovery", "registration", "authorization" or
    "token"), talking to `url`; `error` and `error_description` are the server's OAuth error
    fields when it sent them (RFC 6749 section 5.2), else None."""

    def __init__(
        self,
        step: Step,
        url: str,
        problem: str,
        *,
        error: str | None = None,
        error_description: str | None = None,
    ) -> None:
        self.step: Step = step
        self.url = url
        self.problem = problem
        self.error = error
        self.error_description = error_description
        text = f"OAuth {step} failed at {url}: {problem}"
        if error:
            text += f" (error {printable(error, 300)!r}"
            text += f": {printable(error_description, 300)})" if error_description else ")"
        httpx.HTTPError.__init__(self, text)

    @classmethod
    def answered(cls, step: Step, url: str, problem: str, body: dict[str, Any]) -> OAuthError:
        """The error for a refusal whose JSON body may carry `error`/`error_description`."""
        return cls(
            step,
            url,
            problem,
            error=text(body.get("error")),
            error_description=text(body.get("error_description")),
        )

    def __str__(self) -> str:
        return str(self.args[0])
