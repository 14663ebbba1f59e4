"""How the user approves an authorization request: three ways, one small interface.

An `Approver` names the redirect URI the flow registers and sends (`redirect_uri`), then turns
an authorization URL into the URL the browser was redirected back to (`approve`); the flow
checks that URL (`authorize.py`), so no approval needs to understand OAuth.

- `Browser()`: interactive. A one-shot loopback listener on 127.0.0.1 (`loopback.py`) and the
  system browser (`webbrowser`); waits `timeout` seconds for the user.
- `Headless()`: for tests and CI. Follows the authorization server's redirects itself, with
  its own cookies, until one points at the redirect URI; works with servers that approve at
  once (a test authorization server, a pre-consented client), and fails clearly otherwise.
- `Callback(handler, redirect_uri)`: for applications with their own UI. `handler(url)` shows
  the URL to the user however it likes and returns the redirect URL it landed on.
"""

from __future__ import annotations

import asyncio
import inspect
import logging
import webbrowser
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from typing import Protocol
from urllib.parse import urljoin, urlsplit, urlunsplit

import httpx

from mcpkit.auth.client.authorize import same_endpoint
from mcpkit.auth.client.errors import OAuthError, requesting
from mcpkit.auth.client.loopback import LoopbackListener, is_loopback_host

logger = logging.getLogger("mcpkit.auth.client")
DEFAULT_REDIRECT = "http://127.0.0.1/callback"


class Approver(Protocol):
    """Gets the user's approval of one authorization request."""

    def redirect_uri(self, registered: Sequence[str]) -> str:
        """The redirect URI to use; `registered` lists the ones configured or registered
        before (preferred when this approval can serve one of them)."""
        ...

    async def approve(self, authorization_url: str, redirect_uri: str) -> str:
        """The URL the browser landed on at `redirect_uri`. Raises OAuthError."""
        ...


@dataclass(frozen=True, slots=True)
class Headless:
    """Follow the authorization redirects without a browser (servers that approve at once)."""

    redirect: str = DEFAULT_REDIRECT
    max_redirects: int = 10
    timeout: float = 30.0

    def redirect_uri(self, registered: Sequence[str]) -> str:
        return registered[0] if registered else self.redirect

    async def approve(self, authorization_url: str, redirect_uri: str) -> str:
        url = authorization_url
        async with httpx.AsyncClient(follow_redirects=False, timeout=self.timeout) as http:
            for _ in range(self.max_redirects + 1):
                if same_endpoint(url, redirect_uri):
                    return url
                with requesting("authorization", _bare(url)):
                    response = await http.get(url)
                location = response.headers.get("location")
                if not response.is_redirect or location is None:
                    raise OAuthError(
                        "authorization",
                        _bare(url),
                        f"HTTP {response.status_code} and no redirect: this server wants a "
                        "person to approve; use Browser() or Callback()",
                    )
                url = urljoin(url, location)
        raise OAuthError("authorization", _bare(url), "too many redirects")


@dataclass(frozen=True, slots=True)
class Callback:
    """Let the application show the authorization URL; `handler` returns the redirect URL
    the browser landed on (sync or async)."""

    handler: Callable[[str], Awaitable[str] | str]
    redirect: str = DEFAULT_REDIRECT

    def redirect_uri(self, registered: Sequence[str]) -> str:
        return self.redirect

    async def approve(self, authorization_url: str, redirect_uri: str) -> str:
        landed = self.handler(authorization_url)
        if inspect.isawaitable(landed):
            landed = await landed
        return str(landed)


@dataclass(frozen=True, slots=True)
class Browser:
    """Open the system browser; catch the redirect on a loopback listener (127.0.0.1).

    `port` 0 takes the port of a registered loopback redirect URI when there is one, else any
    free port; `timeout` is how long the user has, in seconds; `open` opens a URL (by default
    `webbrowser.open`; the URL is also logged at INFO so a user without a browser can copy it).
    Redirect URIs whose host is not loopback are refused: the code must not leave the machine.
    """

    port: int = 0
    path: str = "/callback"
    timeout: float = 300.0
    open: Callable[[str], object] = webbrowser.open

    def redirect_uri(self, registered: Sequence[str]) -> str:
        """The first registered loopback URI with a port; a new one when there is none
        (a port of our own); OAuthError when every registered URI points off this machine."""
        loopback = [u for u in registered if is_loopback_host(urlsplit(u).hostname)]
        for uri in loopback:
            parts = urlsplit(uri)
            if parts.scheme == "http" and parts.port:
                return uri
        if registered and not loopback:
            raise OAuthError(
                "authorization",
                registered[0],
                "the browser flow only listens on loopback (127.0.0.1); none of the redirect "
                "URIs is a loopback URL",
            )
        return f"http://127.0.0.1:{self.port or _free_port()}{self.path}"

    async def approve(self, authorization_url: str, redirect_uri: str) -> str:
        parts = urlsplit(redirect_uri)
        if parts.scheme != "http" or not is_loopback_host(parts.hostname) or not parts.port:
            raise OAuthError(
                "authorization", redirect_uri, "not a loopback redirect URI: refusing to listen"
            )
        listener = LoopbackListener(parts.path or "/")
        try:
            await listener.start(parts.port)
        except OSError as exc:
            raise OAuthError(
                "authorization", redirect_uri, f"cannot listen on port {parts.port}: {exc.strerror}"
            ) from None
        logger.info("open this URL to authorize: %s", authorization_url)
        # In a thread, not awaited: `webbrowser.open` runs $BROWSER and may wait for it to
        # exit (a text-mode browser in this terminal), while the listener must stay served.
        opening = asyncio.get_running_loop().run_in_executor(None, self.open, authorization_url)
        try:
            return await listener.wait(self.timeout)
        except TimeoutError:
            raise OAuthError(
                "authorization",
                _bare(authorization_url),
                f"no answer from the browser within {self.timeout:g} s",
            ) from None
        finally:
            opening.add_done_callback(_ignore_result)


def _ignore_result(future: asyncio.Future[object]) -> None:
    if not future.cancelled():
        future.exception()  # a browser that failed to open is reported by the timeout


def _free_port() -> int:
    import socket

    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def _bare(url: str) -> str:
    """`url` without its query and fragment (they may carry state, codes or challenges)."""
    parts = urlsplit(url)
    return urlunsplit((parts.scheme, parts.netloc, parts.path, "", ""))
