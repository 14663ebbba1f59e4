"""Questions with a fixed set of answers: whole words only, the default shown and taken on
Enter, anything else asked again (a stray "sure" must not approve anything)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from mcpkit.cli.terminal import Terminal


@dataclass(frozen=True, slots=True)
class Choice:
    """One answer: its letter, its word, what it means (shown when asked again)."""

    letter: str
    word: str
    meaning: str


ALLOW = (
    Choice("y", "yes", "once"),
    Choice("s", "session", "until you leave the chat"),
    Choice("a", "always", "remembered in the consent file"),
    Choice("n", "no", "refuse"),
)
YES_NO = (Choice("y", "yes", "yes"), Choice("n", "no", "no"))


def hint(choices: Sequence[Choice], default: str) -> str:
    """`[y/s/a/N]`: the letters, the default's in capitals."""
    return (
        "[" + "/".join(c.letter.upper() if c.letter == default else c.letter for c in choices) + "]"
    )


def parse(answer: str, choices: Sequence[Choice], default: str) -> str | None:
    """The letter `answer` means (trimmed, any case: the letter or the whole word; empty:
    the default), or None when it is neither."""
    said = answer.strip().lower()
    if not said:
        return default
    return next((c.letter for c in choices if said in (c.letter, c.word)), None)


async def choose(terminal: Terminal, question: str, choices: Sequence[Choice], default: str) -> str:
    """Ask until the answer is one of `choices`; the letter. End of input (Ctrl-D) is the
    default. Raises Interrupted (Ctrl-C)."""
    while True:
        answer = await terminal.ask(f"{question} {hint(choices, default)}: ")
        if answer is None:
            return default
        letter = parse(answer, choices, default)
        if letter is not None:
            return letter
        words = ", ".join(f"{c.letter} or {c.word} ({c.meaning})" for c in choices)
        terminal.say(f"  please answer {words}; Enter is {default}")
