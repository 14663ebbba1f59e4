"""Forms on a terminal: a server's elicitation, and the VS Code `inputs` a configuration asks.

Each field of an elicitation form is shown with its title, a `*` when it is required, its
description, its choices and its default; Enter takes the default (or leaves an optional field
out); a value that does not fit the field's schema is refused with the reason and asked again.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from mcpkit.cli.answers import YES_NO, choose
from mcpkit.cli.shown import as_json, shortened
from mcpkit.cli.terminal import Interrupted
from mcpkit.errors import MCPError
from mcpkit.host.visible import one_line

if TYPE_CHECKING:
    from mcpkit.cli.terminal import Terminal
    from mcpkit.host.config import InputSpec

JSONObject = dict[str, Any]
_TRUE, _FALSE = ("y", "yes", "true", "1"), ("n", "no", "false", "0")


class _NoAnswer(MCPError):
    """End of input in the middle of a form."""


async def elicit(terminal: Terminal, server: str, params: JSONObject) -> JSONObject:
    """Show a server's elicitation (form or URL) and return the ElicitResult dict: Ctrl-D
    cancels, Ctrl-C cancels (and the turn in flight)."""
    try:
        return await _elicit(terminal, server, params)
    except _NoAnswer:
        return {"action": "cancel"}
    except Interrupted:
        terminal.say("  cancelled (Ctrl-C)")
        if terminal.on_interrupt is not None:
            terminal.on_interrupt()
        return {"action": "cancel"}


async def _elicit(terminal: Terminal, server: str, params: JSONObject) -> JSONObject:
    terminal.say(f"? {one_line(server)} asks: {one_line(str(params.get('message', '')))}")
    if params.get("mode") == "url":
        terminal.say(f"  open this yourself if you wish: {one_line(str(params.get('url')), 2000)}")
        done = await choose(terminal, "  done?", YES_NO, "n")
        return {"action": "accept" if done == "y" else "decline"}
    schema = params.get("requestedSchema") or {}
    required = set(schema.get("required") or ())
    content: JSONObject = {}
    for name, prop in (schema.get("properties") or {}).items():
        value = await ask_field(terminal, name, prop, name in required)
        if value is not _LEFT_OUT:
            content[name] = value
    terminal.say(f"  to send: {one_line(as_json(content), limit=400)}")
    if await choose(terminal, f"  send this to {one_line(server)}?", YES_NO, "y") != "y":
        return {"action": "decline"}
    return {"action": "accept", "content": content}


_LEFT_OUT = object()


async def ask_field(terminal: Terminal, name: str, prop: JSONObject, required: bool) -> Any:
    """Ask one field until the answer fits its schema; the value, or `_LEFT_OUT` for an
    optional field left empty. Raises _NoAnswer at end of input, Interrupted."""
    from mcpkit.client import form_errors

    describe_field(terminal, name, prop, required)
    options = choices(prop)
    while True:
        typed = await terminal.ask(f"  {one_line(str(prop.get('title') or name))}> ")
        if typed is None:
            raise _NoAnswer
        if not typed.strip():
            if "default" in prop:
                return prop["default"]
            if not required:
                return _LEFT_OUT
            terminal.say("  this field is required")
            continue
        value = parse_value(typed, prop, options)
        problems = form_errors({"properties": {name: prop}, "required": [name]}, {name: value})
        if not problems:
            return value
        terminal.say("  " + one_line("; ".join(p.removeprefix(f"$.{name}: ") for p in problems)))


def describe_field(terminal: Terminal, name: str, prop: JSONObject, required: bool) -> None:
    """The field's title (`*`: required), type, description, choices and default."""
    title = one_line(str(prop.get("title") or name))
    kind = prop.get("type") or "string"
    facts = [str(kind)]
    if prop.get("format"):
        facts.append(one_line(str(prop["format"])))
    for key, label in (("minimum", "min"), ("maximum", "max"), ("minLength", "min length"),
                       ("maxLength", "max length"), ("minItems", "at least"),
                       ("maxItems", "at most")):  # fmt: skip
        if key in prop:
            facts.append(f"{label} {prop[key]}")
    terminal.say(f"  {title}{' *' if required else ''} ({', '.join(facts)})")
    if prop.get("description"):
        for row in shortened(str(prop["description"]), lines=3, indent="    "):
            terminal.say(row)
    options = choices(prop)
    if options:
        listed = "  ".join(f"{n}) {one_line(label)}" for n, (_, label) in enumerate(options, 1))
        several = " (several: separate with commas)" if kind == "array" else ""
        terminal.say(f"    choices{several}: {listed}")
    if kind == "boolean":
        terminal.say("    answer y / yes or n / no")
    if "default" in prop:
        terminal.say(f"    default (Enter): {one_line(as_json(prop['default']), limit=200)}")


def choices(prop: JSONObject) -> list[tuple[Any, str]]:
    """(value, label) pairs of an enum field: `enum` (+ legacy `enumNames`), `oneOf` /
    `anyOf` of consts with titles, and the same under `items` for a multi-select."""
    source = prop.get("items") if prop.get("type") == "array" else prop
    if not isinstance(source, dict):
        return []
    if isinstance(source.get("enum"), list):
        names = prop.get("enumNames") or source.get("enumNames") or []
        values = source["enum"]
        return [(v, str(names[i]) if i < len(names) else str(v)) for i, v in enumerate(values)]
    for key in ("oneOf", "anyOf"):
        if isinstance(source.get(key), list):
            return [
                (o["const"], str(o.get("title") or o["const"]))
                for o in source[key]
                if isinstance(o, dict) and "const" in o
            ]
    return []


def parse_value(typed: str, prop: JSONObject, options: list[tuple[Any, str]]) -> Any:
    """What was typed as the field's type: a choice by number, value or label; a number;
    y / n for a boolean; comma-separated choices for a multi-select. What cannot be read is
    returned as typed, for the schema check to name what is wrong."""
    typed = typed.strip()
    kind = prop.get("type")
    if kind == "array":
        return [_one_choice(part.strip(), options) for part in typed.split(",") if part.strip()]
    if options:
        return _one_choice(typed, options)
    if kind in ("integer", "number"):
        try:
            number = float(typed)
        except ValueError:
            return typed
        return int(number) if kind == "integer" and number.is_integer() else number
    if kind == "boolean":
        said = typed.lower()
        return True if said in _TRUE else False if said in _FALSE else typed
    return typed


def _one_choice(typed: str, options: list[tuple[Any, str]]) -> Any:
    if typed.isdigit() and 1 <= int(typed) <= len(options):
        return options[int(typed) - 1][0]
    for value, label in options:
        if typed in (str(value), label):
            return value
    return typed


def ask_input(terminal: Terminal, spec: InputSpec) -> str | None:
    """Answer a VS Code `${input:ID}` on the terminal before the servers start: its
    description, its default (Enter), its options (`pickString`), without echo when it is a
    password. None when there is no answer (end of input: the servers needing it fail)."""
    raw = spec.raw
    default = raw.get("default") if isinstance(raw.get("default"), str) else None
    options = [o if isinstance(o, str) else o.get("value") for o in raw.get("options") or ()]
    options = [o for o in options if isinstance(o, str)]
    terminal.say(f"? the configuration asks: {one_line(spec.description or spec.id)}")
    if options:
        terminal.say(
            "  choices: " + "  ".join(f"{n}) {one_line(o)}" for n, o in enumerate(options, 1))
        )
    shown_default = "" if default is None or spec.password else f" [{one_line(default)}]"
    while True:
        typed = terminal.ask_now(f"  {one_line(spec.id)}{shown_default}: ", secret=spec.password)
        if typed is None:
            return None
        answer = typed if typed or default is None else default
        if not options:
            return answer
        picked = _one_choice(answer.strip(), [(o, o) for o in options])
        if picked in options:
            return str(picked)
        terminal.say("  please pick one of the choices (its number or its text)")
