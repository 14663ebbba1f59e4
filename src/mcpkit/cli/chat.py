"""`mcpkit chat`: a terminal chat with the servers of a configuration, the user in charge.

The servers start as a host starts them (their state is shown, with the reason for any that
failed); each line typed goes to the model with every offered tool; each tool call the policy
does not allow outright is asked about inline ("y" once, "s" this session, "a" always, "n"
no), as are servers' sampling requests and forms. Answers kept "always" live in a file under
the user's config directory (`--consent-file` to choose another). Commands: /tools,
/servers, /approve (what was remembered; `/approve forget N`, `/approve clear`), /help, /quit.

A remote server that asks for OAuth gets a login of its own, as `mcpkit login` does (the
tokens it stored are used; the browser opens otherwise, `--headless` for servers that approve
at once).

The model: `--provider anthropic` or `openai` (an OpenAI-compatible API, `--base-url` for a
local one), chosen by which of ANTHROPIC_API_KEY / OPENAI_API_KEY is set when not given.
On a terminal, input has line editing and history (prompt_toolkit, the `mcpkit[host]` extra);
piped, lines are read as they come, so scripts and tests drive it the same way.
"""

from __future__ import annotations

import asyncio
import os
import sys
from typing import TYPE_CHECKING, Any

import orjson

from mcpkit.cli.auth import oauth_client
from mcpkit.cli.loading import UsageError
from mcpkit.cli.servers import read_config

if TYPE_CHECKING:
    from mcpkit.host import AgentEvent, Approval, ApprovalRequest, Host
    from mcpkit.host.providers import Provider

HELP = """\
/tools                 the tools the model may use (server__tool)
/servers               each server's state
/approve               remembered answers; /approve forget N, /approve clear
/help                  this text
/quit                  leave (also Ctrl-D)"""
_ANSWERS = {"y": "once", "s": "session", "a": "always"}


class Terminal:
    """Lines in, text out: prompt_toolkit on a terminal, plain lines through a pipe."""

    def __init__(self) -> None:
        self._session: Any = None
        if sys.stdin.isatty() and sys.stdout.isatty():
            try:
                from prompt_toolkit import PromptSession

                self._session = PromptSession()
            except ImportError:  # without the extra: plain input still works
                pass

    async def ask(self, prompt: str) -> str | None:
        """The next line (None at end of input)."""
        if self._session is not None:
            try:
                line: str = await self._session.prompt_async(prompt)
            except EOFError:
                return None
            return line
        self.say(prompt, end="")
        read = await asyncio.get_running_loop().run_in_executor(None, sys.stdin.readline)
        return read.rstrip("\n") if read else None

    def say(self, text: str, end: str = "\n") -> None:
        sys.stdout.write(text + end)
        sys.stdout.flush()


async def chat(args: Any) -> int:
    from mcpkit.host import FileDecisionStore, Host, Timing

    config = read_config(args.config)
    terminal = Terminal()
    provider = make_provider(args)
    store = FileDecisionStore(args.consent_file)
    host = Host(
        config,
        provider=provider,
        approve=lambda request: approve(terminal, request),
        store=store,
        elicit=lambda server, params: elicit(terminal, server, params),
        timing=Timing(connect_timeout=args.timeout),
        auth=lambda server: oauth_client(headless=args.headless, login=True),
    )
    async with host:
        show_servers(terminal, host)
        agent = host.agent(
            model=args.model, max_steps=args.max_steps, on_event=lambda e: show(terminal, e)
        )
        terminal.say("Type a message, or /help.")
        while (line := await terminal.ask("you> ")) is not None:
            line = line.strip()
            if not line:
                continue
            if line.startswith("/"):
                if await command(terminal, host, line) == "quit":
                    break
                continue
            await converse(terminal, agent, line)
    return 0


async def converse(terminal: Terminal, agent: Any, line: str) -> None:
    from mcpkit.host import StepLimitReached
    from mcpkit.host.providers import ProviderError

    try:
        await agent.send(line)
    except (ProviderError, StepLimitReached) as exc:
        terminal.say(f"! {exc}")


def make_provider(args: Any) -> Provider:
    from mcpkit.host.providers import AnthropicProvider, OpenAIProvider

    name = args.provider or (
        "anthropic"
        if os.environ.get("ANTHROPIC_API_KEY")
        else "openai"
        if os.environ.get("OPENAI_API_KEY")
        else None
    )
    if name is None:
        raise UsageError("no model: set ANTHROPIC_API_KEY or OPENAI_API_KEY, or give --provider")
    options: dict[str, Any] = {"base_url": args.base_url}
    if args.model:
        options["default_model"] = args.model
    if name == "anthropic":
        return AnthropicProvider(**options)
    return OpenAIProvider(**options)


def show_servers(terminal: Terminal, host: Host) -> None:
    for name, status in host.servers.status().items():
        reason = f" ({status.error})" if status.error else ""
        terminal.say(f"  {name}: {status.state.value}{reason}")


def show(terminal: Terminal, event: AgentEvent) -> None:
    where = f"{event.server}/{event.tool}"
    if event.kind == "text":
        terminal.say(f"model> {event.text}")
    elif event.kind == "tool_call":
        terminal.say(f"  -> {where} {orjson.dumps(event.data).decode()}")
    elif event.kind == "progress":
        terminal.say(f"  .. {where} {event.text or event.data}")
    elif event.kind == "tool_result":
        failed = bool(getattr(event.data, "is_error", False))
        terminal.say(f"  <- {where} {'failed' if failed else 'done'}")
    elif event.kind == "denied":
        terminal.say(f"  x  {where}: {event.text}")


async def approve(terminal: Terminal, request: ApprovalRequest) -> Approval:
    from mcpkit.host import Approval, Remember

    terminal.say(f"? {request.title}")
    if request.changed:
        terminal.say("  CHANGED since you approved it:")
        terminal.say(f"    before: {request.details.get('previousDescription')!r}")
        terminal.say(f"    now:    {request.details.get('description')!r}")
    for key in ("arguments", "url", "domain", "warnings"):
        if request.details.get(key):
            terminal.say(f"  {key}: {orjson.dumps(request.details[key]).decode()}")
    answer = await terminal.ask("  allow? [y]es once, [s]ession, [a]lways, [n]o: ")
    choice = _ANSWERS.get((answer or "n").strip().lower()[:1])
    if choice is None:
        return Approval(False)
    return Approval(True, Remember(choice))


async def elicit(terminal: Terminal, server: str, params: dict[str, Any]) -> dict[str, Any]:
    terminal.say(f"? {server} asks: {params.get('message', '')}")
    if params.get("mode") == "url":
        terminal.say(f"  open this yourself if you wish: {params.get('url')}")
        done = await terminal.ask("  done? [y/n]: ")
        return {"action": "accept" if (done or "").strip().lower() == "y" else "decline"}
    content: dict[str, Any] = {}
    properties = (params.get("requestedSchema") or {}).get("properties") or {}
    for field, schema in properties.items():
        value = await terminal.ask(f"  {schema.get('title', field)}: ")
        if value is None:
            return {"action": "cancel"}
        if value == "" and field not in (params["requestedSchema"].get("required") or []):
            continue
        content[field] = _typed(value, schema.get("type"))
    send = await terminal.ask(f"  send this to {server}? [y/n]: ")
    if (send or "").strip().lower() != "y":
        return {"action": "decline"}
    return {"action": "accept", "content": content}


def _typed(value: str, kind: Any) -> Any:
    try:
        if kind == "integer":
            return int(value)
        if kind == "number":
            return float(value)
    except ValueError:
        return value  # the client's check of the form names what is wrong
    if kind == "boolean":
        return value.strip().lower() in ("y", "yes", "true", "1")
    return value


async def command(terminal: Terminal, host: Host, line: str) -> str | None:
    words = line.split()
    name = words[0]
    if name in ("/quit", "/exit"):
        return "quit"
    if name == "/servers":
        show_servers(terminal, host)
    elif name == "/tools":
        for tool in await host.tools.list():
            first = (tool.item.description or "").strip().splitlines()[:1]
            terminal.say(f"  {tool.name}  {first[0] if first else ''}")
    elif name == "/approve":
        remembered(terminal, host, words[1:])
    else:
        terminal.say(HELP)
    return None


def remembered(terminal: Terminal, host: Host, words: list[str]) -> None:
    decisions = sorted(host.consent.remembered().items(), key=lambda kv: tuple(kv[0]))
    if words[:1] == ["clear"]:
        host.consent.clear()
        terminal.say("  forgotten: every remembered answer")
        return
    if words[:1] == ["forget"] and len(words) == 2 and words[1].isdigit():
        index = int(words[1]) - 1
        if 0 <= index < len(decisions):
            host.consent.forget(decisions[index][0])
            terminal.say(f"  forgotten: {_label(decisions[index][0])}")
            return
    if not decisions:
        terminal.say("  nothing remembered")
    for n, (key, (decision, how_long)) in enumerate(decisions, 1):
        verdict = "allow" if decision.allow else "deny"
        terminal.say(f"  {n}. {_label(key)}: {verdict} ({how_long.value})")


def _label(key: Any) -> str:
    return " ".join(str(part) for part in tuple(key)[:3] if part)
