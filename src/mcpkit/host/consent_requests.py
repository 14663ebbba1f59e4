"""What the user is asked, and how they answer: `ApprovalRequest` built for each kind of ask,
`Approval`, and a tool's definition and fingerprint (what an approval is remembered against).

A title is one line made safe for a terminal: a server's name, a tool's name or an
elicitation's message can carry newlines, escape sequences or bidi overrides meant to make the
prompt say something else; those characters are shown, not obeyed (host/visible.py: ESC as
`^[`, U+202E as `<U+202E>`), and newlines and tabs become spaces. The details keep the server's text
as it was sent, for the front end to show as text. A URL to open comes with its domain and
warnings for what often hides a different site: punycode, non-ASCII letters, a user name
before the domain, plain http.
"""

from __future__ import annotations

import hashlib
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from enum import StrEnum
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

import orjson

from mcpkit.host.visible import one_line as line

if TYPE_CHECKING:
    from mcpkit.host.consent_store import StoredDecision
    from mcpkit.types import Tool

JSONObject = dict[str, Any]
# The parts of a tool that make its definition (and its fingerprint).
DEFINITION = ("name", "description", "inputSchema", "outputSchema", "annotations")


class Remember(StrEnum):
    ONCE = "once"  # nothing kept
    SESSION = "session"  # kept in the policy object
    ALWAYS = "always"  # written to its DecisionStore


@dataclass(frozen=True, slots=True)
class ApprovalRequest:
    """What the user is asked. `kind`: "tool", "sampling", "sampling_result", "elicitation"
    or "url". `title` is one line, control characters removed; `details` hold the server's
    own text as it was sent: show it as text, never as markup or a link (but a "url" kind's
    `url`, once the user agrees). `changed`: a tool approved before whose definition changed."""

    kind: str
    server: str
    title: str
    details: JSONObject
    changed: bool = False


@dataclass(frozen=True, slots=True)
class Approval:
    """The user's answer. `edited`, for a "sampling_result" only: the result to send instead."""

    allow: bool
    remember: Remember = Remember.ONCE
    edited: JSONObject | None = None


ApprovalCallback = Callable[[ApprovalRequest], Awaitable[Approval] | Approval]


def tool_definition(tool: Tool) -> JSONObject:
    """The parts of a tool the user approves: name, description, input and output schema,
    annotations (wire names; None where absent)."""
    wire = tool.to_wire()
    return {key: wire.get(key) for key in DEFINITION}


def fingerprint(tool: Tool) -> str:
    """sha256 (hex) of the tool's definition as canonical JSON (keys sorted)."""
    return digest(tool_definition(tool))


def digest(definition: JSONObject) -> str:
    """sha256 (hex) of a `tool_definition` as canonical JSON (keys sorted)."""
    canonical = orjson.dumps(definition, option=orjson.OPT_SORT_KEYS)
    return hashlib.sha256(canonical).hexdigest()


def tool_request(
    server: str,
    tool: Tool,
    arguments: JSONObject | None,
    *,
    trusted: bool,
    previous: StoredDecision | None = None,
) -> ApprovalRequest:
    """Ask to run a tool. `previous`: the approval of an earlier definition of it (a changed
    tool: the old description and the names of the parts that changed are in the details)."""
    definition = tool_definition(tool)
    details: JSONObject = {
        "tool": tool.name,
        "title": tool.title,
        "description": tool.description,
        "arguments": arguments or {},
        "inputSchema": definition["inputSchema"],
        "outputSchema": definition["outputSchema"],
        "annotations": definition["annotations"],
        "annotationsTrusted": trusted,
    }
    title = f"{line(server)} wants to run {line(tool.name)}"
    if previous is None:
        return ApprovalRequest("tool", server, title, details)
    before = previous.definition or {}
    details["previousDescription"] = before.get("description")
    details["changedFields"] = [k for k in DEFINITION if before.get(k) != definition[k]]
    title += ", which CHANGED since you approved it"
    return ApprovalRequest("tool", server, title, details, changed=True)


def sampling_request(server: str, params: JSONObject) -> ApprovalRequest:
    """Ask to let the model see a server's sampling request (the details: its params)."""
    count = len(params.get("messages") or ())
    noun = "message" if count == 1 else "messages"
    title = f"{line(server)} wants the model to answer ({count} {noun})"
    return ApprovalRequest("sampling", server, title, _without_meta(params))


def sampling_result_request(server: str, params: JSONObject, result: JSONObject) -> ApprovalRequest:
    """Ask to send the model's answer back (the details: `request` and `result`)."""
    title = f"send the model's answer back to {line(server)}"
    details = {"request": _without_meta(params), "result": result}
    return ApprovalRequest("sampling_result", server, title, details)


def elicitation_request(server: str, params: JSONObject) -> ApprovalRequest:
    """Ask to show a form-mode elicitation (the details: mode "form", message, schema)."""
    message = params.get("message")
    title = f"{line(server)} asks you: {line(message if isinstance(message, str) else '')}"
    return ApprovalRequest("elicitation", server, title, {"mode": "form", **_without_meta(params)})


def url_request(server: str, params: JSONObject) -> ApprovalRequest:
    """Ask to open a URL-mode elicitation's URL: the details carry the full `url`, its
    `domain` (None when it is not an http(s) URL with a host) and `warnings`."""
    url = params.get("url")
    domain, warnings = url_facts(url)
    title = f"{line(server)} wants you to open a page on {line(domain or repr(url))}"
    details = {"mode": "url", **_without_meta(params), "domain": domain, "warnings": warnings}
    return ApprovalRequest("url", server, title, details)


def url_facts(url: object) -> tuple[str | None, list[str]]:
    """The URL's host (None: not an http(s) URL with one) and what looks suspicious in it."""
    try:
        parts = urlsplit(url) if isinstance(url, str) else None
        host = parts.hostname if parts is not None else None
    except ValueError:
        return None, []
    if parts is None or parts.scheme not in ("http", "https") or not host:
        return None, []
    warnings = []
    if parts.scheme != "https":
        warnings.append("plain http: what you send there can be read on the way")
    if "@" in parts.netloc:
        user = parts.username
        warnings.append(f"{user!r} before the domain is a user name: the page is on {host}")
    if not host.isascii():
        warnings.append("the domain has non-ASCII letters, which can imitate another's")
    elif any(label.startswith("xn--") for label in host.split(".")):
        try:
            shown = host.encode("ascii").decode("idna")
        except UnicodeError:
            shown = host
        warnings.append(f"the domain is punycode for {shown!r}: is it the site you expect?")
    return host, warnings


def _without_meta(params: JSONObject) -> JSONObject:
    return {k: v for k, v in params.items() if k != "_meta"}
