"""`mcpkit chat`: a terminal chat with the servers of a configuration, the user in charge.

The servers start as a host starts them (their state is shown, with the reason for any that
failed; a VS Code `${input:ID}` is asked first, a password without echo); each line typed
goes to the model with every offered tool. Each tool call the policy does not allow outright
is asked about inline, with the tool's description and annotations (and whether they are
believed): y / yes once, s / session, a / always, n / no (the default, on Enter); anything
else is asked again. Servers' sampling requests show their system prompt and messages, and
the model's answer is shown (and may be edited) before it goes back; forms show each field's
description, choices and default, and a value that does not fit is asked again. A tool's
result is shown in its first lines (`/show N` for all of it). Answers kept "always" live in
a file under the user's config directory (`--consent-file` to choose another). Commands:
/tools, /servers, /enable, /disable, /restart NAME, /last, /show N, /approve (what was
remembered; `/approve forget N`, `/approve clear`), /help, /quit.

Ctrl-C while the model or a tool is at work cancels that turn (the server is told, the
conversation and the approvals are kept) and comes back to the prompt; Ctrl-C at an empty
prompt, or a second one while a turn is still cancelling, leaves, as does Ctrl-D.

A remote server that asks for OAuth gets a login of its own, as `mcpkit login` does (the
tokens it stored are used; the browser opens otherwise, `--headless` for servers that approve
at once).

The model: `--provider anthropic` or `openai` (an OpenAI-compatible API), chosen by which of
ANTHROPIC_API_KEY / OPENAI_API_KEY is set when not given. `--base-url` (a local server) without
`--model` uses the one model the server lists (`GET /models`), and stops, listing them, when it
has several: the provider's default is a hosted model's name, which a local server lacks.
"""

from __future__ import annotations

import asyncio
import os
from collections.abc import Callable, Coroutine
from typing import TYPE_CHECKING, Any

from mcpkit.cli.approvals import approve
from mcpkit.cli.auth import oauth_client
from mcpkit.cli.chat_commands import Shown, command, show_servers
from mcpkit.cli.forms import ask_input, elicit
from mcpkit.cli.loading import UsageError
from mcpkit.cli.servers import file_order, read_config
from mcpkit.cli.terminal import Interrupted, Terminal
from mcpkit.host.visible import one_line

if TYPE_CHECKING:
    from mcpkit.host import Agent, Host
    from mcpkit.host.providers import Provider


async def chat(args: Any) -> int:
    from mcpkit.host import FileDecisionStore, Host, Timing

    terminal = Terminal()
    provider = await make_provider(args, terminal)
    config = read_config(args.config, ask=lambda spec: ask_input(terminal, spec))
    shown = Shown(terminal)
    host = Host(
        config,
        provider=provider,
        approve=lambda request: approve(terminal, request),
        store=FileDecisionStore(args.consent_file),
        elicit=lambda server, params: elicit(terminal, server, params),
        timing=Timing(connect_timeout=args.timeout),
        auth=lambda server: oauth_client(headless=args.headless, login=True),
    )
    order = file_order(args.config)
    with terminal.catching_ctrl_c():
        async with host:
            show_servers(terminal, host, order)
            agent = host.agent(model=args.model, max_steps=args.max_steps, on_event=shown.event)
            terminal.say("Type a message, or /help.")
            await Conversation(terminal, host, agent, shown, order).run()
    return 0


class Conversation:
    """The prompt loop, and the one turn in flight that Ctrl-C cancels."""

    def __init__(
        self, terminal: Terminal, host: Host, agent: Agent, shown: Shown, order: list[str]
    ) -> None:
        self.terminal, self.host, self.agent = terminal, host, agent
        self.shown, self.order = shown, order
        self.turn: asyncio.Task[str] | None = None
        self.leaving = asyncio.Event()
        terminal.on_interrupt = self.interrupt

    async def run(self) -> None:
        while not self.leaving.is_set():
            try:
                text = await self._unless_leaving(self.terminal.ask("you> "))
            except Interrupted:  # Ctrl-C at the prompt (or just before it)
                return
            if text is None:  # Ctrl-D
                return
            text = text.strip()
            if not text:
                continue
            if text.startswith("/"):
                if await command(self.terminal, self.host, self.shown, self.order, text):
                    return
                continue
            await self.converse(text)

    async def _unless_leaving(self, asking: Coroutine[Any, Any, str | None]) -> str | None:
        """The line asked; Interrupted when a Ctrl-C said leave before it came."""
        answer = asyncio.ensure_future(asking)
        if not await self._or_leaving(answer):
            raise Interrupted
        return answer.result()

    async def _or_leaving(self, task: asyncio.Future[Any]) -> bool:
        """Wait for `task`, or for a Ctrl-C that says leave: whether `task` ended (if not, it
        is cancelled and given a moment to end, before the servers close)."""
        leave = asyncio.ensure_future(self.leaving.wait())
        try:
            await asyncio.wait({task, leave}, return_when=asyncio.FIRST_COMPLETED)
        finally:
            leave.cancel()
        if task.done():
            return True
        task.cancel()
        await asyncio.wait({task}, timeout=2.0)
        return False

    def interrupt(self) -> None:
        """Ctrl-C outside a prompt: cancel the turn in flight; a second one, or none in
        flight, leaves."""
        turn = self.turn
        if turn is None or turn.done() or turn.cancelling():
            self.leaving.set()
            return
        self.terminal.say("\n  cancelling this turn (Ctrl-C again to leave)")
        turn.cancel()

    async def converse(self, text: str) -> None:
        from mcpkit.host import StepLimitReached
        from mcpkit.host.providers import ProviderError

        self.turn = turn = asyncio.ensure_future(self.agent.send(text))
        try:
            if not await self._or_leaving(turn):
                return
        finally:
            self.turn = None
        if turn.cancelled():
            self.terminal.say("  (cancelled: the conversation goes on from here)")
            return
        error = turn.exception()
        if isinstance(error, ProviderError | StepLimitReached):
            self.terminal.say(f"! {error}")
        elif error is not None:
            raise error


async def make_provider(args: Any, terminal: Terminal) -> Provider:
    """The model API the arguments and the environment choose. Raises UsageError."""
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
    kind = AnthropicProvider if name == "anthropic" else OpenAIProvider
    model = args.model
    if model is None and args.base_url:
        model = await local_model(kind, args.base_url)
        terminal.say(f"  model: {one_line(model)} (the only one {one_line(args.base_url)} has)")
    options: dict[str, Any] = {"base_url": args.base_url}
    if model:
        options["default_model"] = model
    return kind(**options)


async def local_model(kind: Callable[..., Any], base_url: str) -> str:
    """The model of a server at `base_url` given without --model: the one its model list
    (`GET /models`) names. A hosted model's name is never sent to it. Raises UsageError when
    the list names several (they are listed), none, or cannot be read."""
    needs = "--base-url needs --model"
    probe = kind(base_url=base_url, max_retries=0, timeout=10.0)
    try:
        page = await probe.client.models.list()
        names = [str(model.id) for model in page.data]
    except Exception as exc:  # the SDK's errors; their text could carry the key: not shown
        raise UsageError(
            f"{needs} (the server's model list could not be read: {type(exc).__name__})"
        ) from None
    finally:
        await probe.aclose()
    if len(names) == 1:
        return names[0]
    if not names:
        raise UsageError(f"{needs} (the server lists no models)")
    raise UsageError(f"{needs}: the server has {', '.join(one_line(n) for n in names[:20])}")
