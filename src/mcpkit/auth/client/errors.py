"""The one exception the OAuth client raises: which step failed, where, and what the server said.

An `MCPError` like every error of mcpkit, and nothing else: the OAuth client runs inside
httpx's auth flow, and the HTTP transports turn an `MCPError` raised while sending into a
failed request (or a closed connection) with this message, as they do httpx's own errors.
httpx's errors never leave the OAuth client: `requesting` maps them to an `OAuthError` at the
one place each request is sent. Nothing secret goes into a message: no client secret,
authorization code, code verifier or token, only step, URL and the server's own words.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any, Literal

import httpx

from mcpkit.auth.client.wire import printable, text
from mcpkit.errors import MCPError

Step = Literal["discovery", "registration", "authorization", "token"]


class OAuthError(MCPError):
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
        super().__init__(text)

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


@contextmanager
def requesting(step: Step, url: str, failed: str = "the request failed") -> Iterator[None]:
    """The OAuth client's boundary with httpx: an `httpx.HTTPError` raised inside becomes an
    `OAuthError` for `step` at `url`. The message names the error's type only: httpx's text
    may quote a URL with its query (a code, a state)."""
    try:
        yield
    except httpx.HTTPError as exc:
        raise OAuthError(step, url, f"{failed}: {type(exc).__name__}") from None
