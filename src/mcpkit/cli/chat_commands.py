"""What `mcpkit chat` shows as a turn goes (the model's words, tool calls and their results)
and the slash commands."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from mcpkit.cli.shown import as_json, result_text, safe_lines, shortened
from mcpkit.host.visible import one_line

if TYPE_CHECKING:
    from mcpkit.cli.terminal import Terminal
    from mcpkit.host import AgentEvent, Host, ServerStatus

HELP = """\
/tools                 the tools the model may use (server__tool)
/servers               each server's state
/enable NAME           start a server (a disabled or failed one)
/disable NAME          stop a server, keeping it configured
/restart NAME          stop and start a server again
/last, /show N         the last tool result, or result N, in full
/approve               remembered answers; /approve forget N, /approve clear
/help                  this text
/quit                  leave (also Ctrl-D, or Ctrl-C at an empty prompt)"""
RESULT_LINES = 5  # of a tool result shown as it comes; /show has the rest


@dataclass
class Shown:
    """The chat's output of a turn's events; keeps every tool result for /show."""

    terminal: Terminal
    results: list[str] = field(default_factory=list)

    def event(self, event: AgentEvent) -> None:
        where = f"{one_line(str(event.server))}/{one_line(str(event.tool))}"
        say = self.terminal.say
        if event.kind == "text":
            rows = safe_lines(event.text) or [""]
            say(f"model> {rows[0]}")
            for row in rows[1:]:
                say(f"       {row}")
        elif event.kind == "tool_call":
            say(f"  -> {where} {one_line(as_json(event.data), limit=400)}")
        elif event.kind == "progress":
            say(f"  .. {where} {one_line(event.text or as_json(event.data))}")
        elif event.kind == "tool_result":
            self._result(where, event.data)
        elif event.kind == "tool_error":
            say(f"  <- {where} failed: {one_line(event.text)}")
        elif event.kind == "denied":
            say(f"  x  {where}: {one_line(event.text)}")

    def _result(self, where: str, result: Any) -> None:
        wire = result.to_wire() if hasattr(result, "to_wire") else dict(result or {})
        text = result_text(wire)
        self.results.append(text)
        number = len(self.results)
        state = "failed" if wire.get("isError") else "done"
        self.terminal.say(f"  <- {where} {state} [{number}]")
        rows = shortened(text, lines=RESULT_LINES, indent="     | ")
        if len(safe_lines(text)) > RESULT_LINES:
            rows[-1] += f" (/show {number} for all of it)"
        for row in rows:
            self.terminal.say(row)

    def show(self, words: list[str]) -> None:
        """`/last` (no words) or `/show N`: a tool result in full."""
        if not self.results:
            self.terminal.say("  no tool results yet")
            return
        if not words:
            number = len(self.results)
        elif words[0].isdigit() and 1 <= int(words[0]) <= len(self.results):
            number = int(words[0])
        else:
            self.terminal.say(f"  /show N, N from 1 to {len(self.results)}")
            return
        self.terminal.say(f"  [{number}]")
        for row in safe_lines(self.results[number - 1]):
            self.terminal.say(f"     | {row}")


async def command(
    terminal: Terminal, host: Host, shown: Shown, order: list[str], text: str
) -> str | None:
    """Run one slash command; "quit" when it is time to leave."""
    words = text.split()
    name, rest = words[0], words[1:]
    if name in ("/quit", "/exit"):
        return "quit"
    if name == "/help":
        terminal.say(HELP)
    elif name == "/servers":
        show_servers(terminal, host, order)
    elif name == "/tools":
        for tool in await host.tools.list():
            first = (tool.item.description or "").strip().splitlines()[:1]
            terminal.say(f"  {one_line(tool.name)}  {one_line(first[0]) if first else ''}")
    elif name in ("/enable", "/disable", "/restart"):
        await switch(terminal, host, name[1:], rest)
    elif name == "/last":
        shown.show([])
    elif name == "/show":
        shown.show(rest)
    elif name == "/approve":
        remembered(terminal, host, rest)
    else:
        terminal.say(f"  unknown command {one_line(name)}; /help lists the commands")
    return None


def show_servers(terminal: Terminal, host: Host, order: list[str]) -> None:
    """Each server's state (and why it failed), in the configuration file's order."""
    from mcpkit.cli.servers import in_file_order

    for status in in_file_order(order, host.servers.status()).values():
        _say_state(terminal, status)


def _say_state(terminal: Terminal, status: ServerStatus) -> None:
    from mcpkit.cli.servers import state_text
    from mcpkit.host import ServerState

    said = "ready" if status.state is ServerState.READY else state_text(status, [])
    terminal.say(f"  {one_line(status.name)}: {one_line(said, limit=1000)}")


async def switch(terminal: Terminal, host: Host, verb: str, words: list[str]) -> None:
    """/enable, /disable or /restart a configured server, and say where it stands."""
    statuses = host.servers.status()
    if len(words) != 1:
        terminal.say(f"  /{verb} NAME, one of: {', '.join(statuses)}")
        return
    name = words[0]
    if name in host.config.errors:
        terminal.say(f"  {one_line(name)} cannot start: {one_line(str(host.config.errors[name]))}")
        return
    if name not in host.config.servers:
        terminal.say(f"  no server named {one_line(name)}; the servers: {', '.join(statuses)}")
        return
    if verb == "disable":
        await host.servers.disable(name)
    else:
        terminal.say(f"  {'starting' if verb == 'enable' else 'restarting'} {one_line(name)}…")
        await host.servers.enable(name)
    _say_state(terminal, host.servers.status()[name])


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
    return " ".join(one_line(str(part)) for part in tuple(key)[:3] if part)
