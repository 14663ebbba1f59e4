"""A server's questions (elicitation) during `mcpkit call`, `read` and `prompt`, and a
configuration's (VS Code `inputs`) for `mcpkit servers` and a `CONFIG.json#NAME` target.

The same forms as `mcpkit chat` (cli/forms.py): on a terminal the person answers field by
field; piped, each answer is the next line of stdin (`printf 'yes\n\n' | mcpkit call ...`).
Questions and form text go to stderr, so stdout holds only the result (`--json | jq` keeps
working). A configuration's questions are asked only when stdin is a terminal: with none,
nothing is asked and the servers needing an answer fail, saying which input was left unanswered.
When no answer can come (stdin ended, or is /dev/null) the question is cancelled and
stderr says so, instead of the call failing with a protocol error the user cannot act on.
"""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING, Any

from mcpkit.cli.terminal import Terminal
from mcpkit.client import Elicitation
from mcpkit.host.visible import visible

if TYPE_CHECKING:
    from mcpkit.host.config import InputSpec

JSONObject = dict[str, Any]


class QuestionTerminal(Terminal):
    """The chat's terminal, speaking on stderr and remembering that input ended."""

    def __init__(self) -> None:
        super().__init__()
        self.interactive = self.interactive and sys.stderr.isatty()
        self.input_ended = False

    async def ask(self, prompt: str, *, default: str = "", secret: bool = False) -> str | None:
        if self.input_ended:
            return None
        answer = await super().ask(prompt, default=default, secret=secret)
        self.input_ended = answer is None
        return answer

    def say(self, text: str, end: str = "\n") -> None:
        sys.stderr.write(visible(text, lines=True) + end)
        sys.stderr.flush()


def answering(server: str) -> Elicitation:
    """The client's elicitation handler for a command talking to `server` (form and URL)."""
    terminal = QuestionTerminal()

    async def answer(params: Any) -> JSONObject:
        from mcpkit.cli.forms import elicit  # the host's modules load only when a server asks

        asked: JSONObject = params.model_dump(by_alias=True, exclude_none=True, mode="json")
        result = await elicit(terminal, server, asked)
        if terminal.input_ended:
            terminal.say(
                "mcpkit: the server asked a question and no answer can come (stdin ended): "
                "answered 'cancel'. Run on a terminal, or pipe the answers in, one per line."
            )
        return result

    return Elicitation(answer, form=True, url=True)


def ask_on_terminal(spec: InputSpec) -> str | None:
    """A configuration's `${input:ID}` asked on the terminal, its text on stderr; None (and
    nothing asked) when stdin is no terminal."""
    if not (sys.stdin and sys.stdin.isatty()):
        return None
    from mcpkit.cli.forms import ask_input

    return ask_input(QuestionTerminal(), spec)
