"""What `mcpkit chat` shows for each approval, and the answer it makes of what is typed.

A tool: its description, its annotations and whether they are believed (only a server the
configuration trusts has its hints believed), the arguments. A sampling request: the system
prompt and each message, shortened. The model's answer to it: the completion, which the
person may send, refuse, or edit first. Every answer is y / yes, s / session, a / always or
n / no (the default); Ctrl-C at the question refuses and cancels the turn.
"""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING, Any

from mcpkit.cli.answers import ALLOW, YES_NO, Choice, choose
from mcpkit.cli.shown import as_json, message_text, shortened
from mcpkit.cli.terminal import Interrupted
from mcpkit.host.consent_requests import Approval, ApprovalRequest, Remember
from mcpkit.host.visible import one_line

if TYPE_CHECKING:
    from mcpkit.cli.terminal import Terminal

JSONObject = dict[str, Any]
_REMEMBER = {"y": Remember.ONCE, "s": Remember.SESSION, "a": Remember.ALWAYS}
EDIT = Choice("e", "edit", "change the answer before it is sent")
_HINTS = {
    "readOnlyHint": "read-only",
    "destructiveHint": "destructive",
    "idempotentHint": "idempotent",
    "openWorldHint": "reaches outside (open world)",
}


async def approve(terminal: Terminal, request: ApprovalRequest) -> Approval:
    """Show `request`, ask, and return the person's answer (Ctrl-C: no, and the turn in
    flight is cancelled)."""
    try:
        return await _approve(terminal, request)
    except Interrupted:
        terminal.say("  refused (Ctrl-C)")
        if terminal.on_interrupt is not None:
            terminal.on_interrupt()
            # Asked from inside the turn: its cancellation lands here, before the model is
            # asked to go on; asked for a server (sampling), the turn ends on its own task.
            await asyncio.sleep(0)
        return Approval(False)


async def _approve(terminal: Terminal, request: ApprovalRequest) -> Approval:
    terminal.say(f"? {request.title}")
    details = request.details
    if request.kind == "tool":
        show_tool(terminal, request)
    elif request.kind == "sampling":
        show_sampling(terminal, details)
    elif request.kind == "sampling_result":
        return await _sampling_result(terminal, details)
    elif request.kind == "url":
        terminal.say(f"  url: {one_line(str(details.get('url')), limit=2000)}")
        for warning in details.get("warnings") or ():
            terminal.say(f"  warning: {one_line(warning)}")
    letter = await choose(terminal, "  allow?", ALLOW, "n")
    return _approval(letter)


def _approval(letter: str) -> Approval:
    if letter not in _REMEMBER:
        return Approval(False)
    return Approval(True, _REMEMBER[letter])


def show_tool(terminal: Terminal, request: ApprovalRequest) -> None:
    """A tool's description (a few lines), annotations and arguments."""
    details = request.details
    if request.changed:
        terminal.say("  CHANGED since you approved it: " + ", ".join(details["changedFields"]))
        terminal.say("  before:")
        _say_all(terminal, shortened(str(details.get("previousDescription") or ""), indent="    "))
        terminal.say("  now:")
        _say_all(terminal, shortened(str(details.get("description") or ""), indent="    "))
    elif details.get("description"):
        _say_all(terminal, shortened(str(details["description"]), lines=4))
    terminal.say("  " + annotations_text(details.get("annotations"), details["annotationsTrusted"]))
    terminal.say(f"  arguments: {one_line(as_json(details.get('arguments') or {}), limit=400)}")


def annotations_text(annotations: JSONObject | None, trusted: bool) -> str:
    """One line: the hints a tool claims, and whether they are believed."""
    said = [
        f"{label}: {'yes' if annotations[key] else 'no'}"
        for key, label in _HINTS.items()
        if annotations and isinstance(annotations.get(key), bool)
    ]
    if not said:
        return "annotations: none"
    if trusted:
        whose = "(the server is trusted in your configuration: believed)"
    else:
        whose = "(the server's own claims, not believed: it is not trusted in your configuration)"
    return f"annotations: {', '.join(said)} {whose}"


def show_sampling(terminal: Terminal, params: JSONObject) -> None:
    """A sampling request: system prompt, each message (shortened), its limits."""
    if params.get("systemPrompt"):
        terminal.say("  system prompt:")
        _say_all(terminal, shortened(str(params["systemPrompt"]), lines=3, indent="    "))
    for message in params.get("messages") or ():
        terminal.say(f"  {one_line(str(message.get('role')))}:")
        _say_all(terminal, shortened(message_text(message), lines=4, indent="    "))
    context = params.get("includeContext")
    extras = [f"at most {params.get('maxTokens')} tokens"]
    if context and context != "none":
        extras.append(f"asks for context: {one_line(str(context))}")
    if params.get("tools"):
        names = ", ".join(one_line(str(t.get("name"))) for t in params["tools"])
        extras.append(f"offers the model tools: {names}")
    terminal.say("  (" + "; ".join(extras) + ")")


async def _sampling_result(terminal: Terminal, details: JSONObject) -> Approval:
    result: JSONObject = details["result"]
    text = completion_text(result)
    terminal.say(f"  the model ({one_line(str(result.get('model')))}) answered:")
    _say_all(terminal, shortened(text, lines=8, indent="    "))
    editable = text is not None and _only_text(result)
    choices = (*ALLOW[:3], EDIT, ALLOW[3]) if editable else ALLOW
    letter = await choose(terminal, "  send it?", choices, "n")
    if letter != "e":
        return _approval(letter)
    edited = await terminal.ask("  your answer: ", default=text)
    if edited is None:
        return Approval(False)
    if await choose(terminal, "  send your answer?", YES_NO, "y") != "y":
        return Approval(False)
    return Approval(True, edited={**result, "content": {"type": "text", "text": edited}})


def completion_text(result: JSONObject) -> str:
    """The text of a sampling result (its blocks summarized where not text)."""
    return message_text(result)


def _only_text(result: JSONObject) -> bool:
    blocks = result.get("content")
    blocks = blocks if isinstance(blocks, list) else [blocks]
    return all(isinstance(b, dict) and b.get("type") == "text" for b in blocks)


def _say_all(terminal: Terminal, rows: list[str]) -> None:
    for row in rows:
        terminal.say(row)
