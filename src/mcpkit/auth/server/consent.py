"""The consent page and its CSRF protection: plain HTML, one form, no script.

The page names the client (and whether that name is only what the client says of itself),
the host the user will be sent back to (a warning when it is a local address, which any
program on the machine could be listening at), the scopes and the resource, and asks for a
username and password when the user is not already known. The authorization request's own
parameters ride along as hidden fields and are checked again when the form comes back.

CSRF: a cookie this server issued (a random value and its HMAC under a server secret, so a
value planted by someone else is ignored; SameSite=Lax, HttpOnly; `__Host-` and Secure over
https) plus a form token that is an HMAC, under the same secret, of that cookie, the digest
of the request's parameters and the time: a page on another site can neither read the token
nor make the browser send the cookie with its POST, and a token cannot be moved to other
parameters. Cookies do not keep ports apart, and every port of a loopback host is the same
site (SameSite does not help there), so the POST must also come from this server's own
origin when the browser says where it comes from (`Origin`, `Sec-Fetch-Site`).
Every page is sent with no-store and clickjacking headers (frame-ancestors 'none', DENY).
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
import secrets
from collections.abc import Mapping
from dataclasses import dataclass
from html import escape

from mcpkit.auth.server.asgi import NO_STORE, Headers, HTTPResponse

FORM_LIFETIME = 600.0


@dataclass(frozen=True)
class ConsentView:
    client_id: str
    client_name: str | None
    self_described: bool
    redirect_host: str
    local_redirect: bool
    scopes: tuple[str, ...]
    resource: str
    fields: Mapping[str, str]
    csrf: str
    action: str
    signed_in_as: str | None
    message: str | None = None


def page_headers(form_target: str | None = None) -> Headers:
    sources = "'self'" + (f" {form_target}" if form_target else "")
    policy = (
        "default-src 'none'; style-src 'unsafe-inline'; frame-ancestors 'none'; "
        f"base-uri 'none'; form-action {sources}"
    )
    return [
        (b"content-type", b"text/html; charset=utf-8"),
        *NO_STORE,
        (b"x-frame-options", b"DENY"),
        (b"content-security-policy", policy.encode()),
        (b"x-content-type-options", b"nosniff"),
        (b"referrer-policy", b"no-referrer"),
    ]


_STYLE = (
    "body{font-family:system-ui,sans-serif;max-width:32rem;margin:3rem auto;padding:0 1rem}"
    "li{margin:.2rem 0}.warn{color:#8a4b00}.error{color:#a00}label{display:block;margin:.5rem 0}"
    "button{margin:1rem .5rem 0 0;padding:.4rem 1rem}"
)


def _document(title: str, body: str) -> bytes:
    return (
        f'<!doctype html><html lang="en"><head><meta charset="utf-8"><title>{escape(title)}'
        f'</title><meta name="viewport" content="width=device-width">'
        f"<style>{_STYLE}</style></head><body>{body}</body></html>"
    ).encode()


def render_consent(view: ConsentView) -> bytes:
    name = escape(view.client_name or view.client_id)
    parts = [f"<h1>Allow {name}?</h1>"]
    if view.self_described:
        parts.append(
            f"<p>Client id: <code>{escape(view.client_id)}</code>. Its name is what "
            "the client says of itself, not verified by this server.</p>"
        )
    parts.append(
        f"<p>After you decide you will be sent to <strong>{escape(view.redirect_host)}"
        "</strong>.</p>"
    )
    if view.local_redirect:
        parts.append(
            '<p class="warn">That is an address on your own computer: allow only if '
            "you just started this application yourself.</p>"
        )
    scopes = "".join(f"<li><code>{escape(s)}</code></li>" for s in view.scopes) or "<li>none</li>"
    parts.append(f"<p>It asks for these scopes:</p><ul>{scopes}</ul>")
    parts.append(f"<p>For use with <code>{escape(view.resource)}</code>.</p>")
    if view.message:
        parts.append(f'<p class="error">{escape(view.message)}</p>')
    parts.append(f'<form method="post" action="{escape(view.action)}">')
    hidden = dict(view.fields, csrf=view.csrf)
    parts.extend(
        f'<input type="hidden" name="{escape(k)}" value="{escape(v)}">' for k, v in hidden.items()
    )
    if view.signed_in_as is None:
        parts.append(
            '<label>Username <input name="username" autocomplete="username" required>'
            '</label><label>Password <input name="password" type="password" '
            'autocomplete="current-password" required></label>'
        )
    else:
        parts.append(f"<p>Signed in as <strong>{escape(view.signed_in_as)}</strong>.</p>")
    parts.append(
        '<button name="decision" value="approve">Allow</button>'
        '<button name="decision" value="deny" formnovalidate>Deny</button></form>'
    )
    return _document("Authorize access", "".join(parts))


def render_error(error: str, description: str) -> bytes:
    body = (
        "<h1>This request cannot be authorized</h1>"
        f"<p><code>{escape(error)}</code>: {escape(description)}</p>"
        "<p>You have not been sent back to the application that sent you here.</p>"
    )
    return _document("Authorization error", body)


def error_page(error: str, description: str, status: int = 400) -> HTTPResponse:
    return HTTPResponse(status, render_error(error, description), page_headers())


def fields_digest(fields: Mapping[str, str]) -> str:
    canonical = json.dumps(sorted(fields.items()))
    return hashlib.sha256(canonical.encode()).hexdigest()


class CSRFGuard:
    def __init__(self, secret: bytes, secure: bool) -> None:
        self._secret = secret
        self.cookie_name = "__Host-mcpkit-csrf" if secure else "mcpkit-csrf"
        self._secure = secure

    def cookie(self, headers: Mapping[str, str]) -> str | None:
        """This browser's CSRF cookie, if it sent one this server issued."""
        for item in headers.get("cookie", "").split(";"):
            name, _, value = item.strip().partition("=")
            nonce, _, mac = value.partition(".")
            # Ours: a nonce and its MAC ("cookie" and no time keep it apart from form tokens).
            issued = hmac.compare_digest(mac, self._mac("cookie", nonce, ""))
            if name == self.cookie_name and len(nonce) == 43 and issued:
                return value
        return None

    def set_cookie(self, value: str) -> tuple[bytes, bytes]:
        attributes = "Path=/; HttpOnly; SameSite=Lax" + ("; Secure" if self._secure else "")
        return b"set-cookie", f"{self.cookie_name}={value}; {attributes}".encode()

    def new_cookie(self) -> str:
        nonce = secrets.token_urlsafe(32)
        return f"{nonce}.{self._mac('cookie', nonce, '')}"

    def token(self, cookie: str, digest: str, now: float) -> str:
        """A form token: its time, a nonce (every page's token differs, so answering one
        page spends no other) and the MAC of both with the cookie and the request."""
        stamp = f"{int(now)}-{secrets.token_urlsafe(8)}"
        return f"{stamp}.{self._mac(cookie, digest, stamp)}"

    def check(self, token: str | None, cookie: str | None, digest: str, now: float) -> bool:
        if not token or not cookie:
            return False
        stamp, _, mac = token.partition(".")
        issued = stamp.partition("-")[0]
        if not issued.isdigit() or not 0 <= now - int(issued) <= FORM_LIFETIME:
            return False
        return hmac.compare_digest(mac, self._mac(cookie, digest, stamp))

    @staticmethod
    def same_origin(headers: Mapping[str, str], origin: str) -> bool:
        """Whether a POST comes from `origin` as far as the browser says (a client that is
        no browser says nothing, and cannot be made to post by another site). The page's
        `Referrer-Policy: no-referrer` makes browsers send `Origin: null` for its own form:
        that says nothing, and `Sec-Fetch-Site` (which every current browser sends) decides."""
        sent_from = headers.get("origin")
        if sent_from not in (None, "null", origin):
            return False
        return headers.get("sec-fetch-site", "same-origin") in ("same-origin", "none")

    def _mac(self, cookie: str, digest: str, issued: str) -> str:
        message = f"{cookie}|{digest}|{issued}".encode()
        mac = hmac.new(self._secret, message, hashlib.sha256).digest()
        return base64.urlsafe_b64encode(mac).rstrip(b"=").decode()
