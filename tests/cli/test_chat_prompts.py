"""The pieces of `mcpkit chat`'s prompts that need no terminal: reading an answer, reading a
form field, describing annotations, shortening server text, VS Code inputs left unanswered.
(The chat itself is driven on a real terminal in tests/host/test_chat_terminal.py.)"""

from __future__ import annotations

import pytest

from mcpkit.cli.answers import ALLOW, hint, parse
from mcpkit.cli.approvals import annotations_text
from mcpkit.cli.chat_commands import Shown
from mcpkit.cli.forms import choices, parse_value
from mcpkit.cli.shown import shortened
from mcpkit.cli.terminal import Terminal
from mcpkit.host import load_config
from mcpkit.host.agent import AgentEvent
from mcpkit.host.config import InputSpec


@pytest.mark.parametrize(
    ("typed", "meant"),
    [
        ("y", "y"), ("YES", "y"), ("  yes ", "y"), ("s", "s"), ("Session", "s"),
        ("a", "a"), ("always", "a"), ("n", "n"), ("No", "n"), ("", "n"), ("   ", "n"),
        ("sure", None), ("ok", None), ("yeah", None), ("ye", None), ("nope", None),
        ("all", None), ("y es", None),
    ],
)  # fmt: skip
def test_an_answer_is_a_whole_word_or_nothing(typed: str, meant: str | None) -> None:
    assert parse(typed, ALLOW, "n") == meant


def test_the_default_is_shown_in_capitals() -> None:
    assert hint(ALLOW, "n") == "[y/s/a/N]"
    assert hint(ALLOW, "y") == "[Y/s/a/n]"


def test_form_values_are_read_as_their_field_types() -> None:
    enum = {"type": "string", "enum": ["s", "d"], "enumNames": ["Single", "Double"]}
    assert choices(enum) == [("s", "Single"), ("d", "Double")]
    assert [parse_value(t, enum, choices(enum)) for t in ("2", "Single", "d", "3")] == [
        "d", "s", "d", "3",
    ]  # fmt: skip
    titled = {"type": "string", "oneOf": [{"const": "r", "title": "Red"}, {"const": "g"}]}
    assert choices(titled) == [("r", "Red"), ("g", "g")]
    several = {"type": "array", "items": {"type": "string", "enum": ["a", "b", "c"]}}
    assert parse_value("1, c", several, choices(several)) == ["a", "c"]
    assert parse_value("4", {"type": "integer"}, []) == 4
    assert parse_value("4.5", {"type": "integer"}, []) == 4.5  # the schema check refuses it
    assert parse_value("x", {"type": "number"}, []) == "x"
    assert parse_value("Yes", {"type": "boolean"}, []) is True
    assert parse_value("no", {"type": "boolean"}, []) is False
    assert parse_value("maybe", {"type": "boolean"}, []) == "maybe"


def test_annotations_say_whether_they_are_believed() -> None:
    hints = {"readOnlyHint": True, "destructiveHint": False, "title": "x"}
    untrusted = annotations_text(hints, trusted=False)
    assert untrusted.startswith("annotations: read-only: yes, destructive: no ")
    assert "not believed" in untrusted
    assert "is trusted in your configuration: believed" in annotations_text(hints, trusted=True)
    assert annotations_text(None, trusted=False) == "annotations: none"


def test_server_text_is_shortened_and_cannot_redraw_the_terminal() -> None:
    text = "\x1b[2J\x1b[Hfirst\u202e line\n" + "\n".join(f"line {i}" for i in range(2, 10))
    rows = shortened(text, lines=3)
    assert "\x1b" not in rows[0] and "\u202e" not in rows[0]  # nothing a terminal obeys
    assert rows[0] == "  ^[[2J^[[Hfirst<U+202E> line"  # shown, not obeyed
    assert rows[1:3] == ["  line 2", "  line 3"]
    assert rows[3] == "  … 6 more lines"
    assert shortened("x" * 500, lines=1)[0].endswith("…")


def test_an_input_left_unanswered_fails_the_servers_needing_it_asked_once() -> None:
    asked: list[str] = []

    def ask(spec: InputSpec) -> str | None:
        asked.append(spec.id)
        return None

    config = load_config(
        {
            "inputs": [{"type": "promptString", "id": "key", "password": True}],
            "servers": {
                "one": {"command": "x", "env": {"K": "${input:key}"}},
                "two": {"command": "y", "args": ["${input:key}"]},
                "free": {"command": "z"},
            },
        },
        ask=ask,
    )
    assert asked == ["key"]
    assert list(config.servers) == ["free"]
    assert "${input:key} was not answered" in str(config.errors["one"])
    assert "${input:key} was not answered" in str(config.errors["two"])


def test_a_tool_call_that_raised_is_shown_as_failed(capsys: pytest.CaptureFixture[str]) -> None:
    """The agent's tool_error event (the server failed or went away mid-call) is shown, with
    its reason on one line; before, the chat showed the call and then nothing."""
    shown = Shown(Terminal())
    shown.event(AgentEvent("tool_call", "", "alpha", "crash", {}))
    shown.event(AgentEvent("tool_error", "connection closed:\nexit 1", "alpha", "crash"))
    out = capsys.readouterr().out.splitlines()
    assert out[-1] == "  <- alpha/crash failed: connection closed: exit 1"
    assert shown.results == []  # nothing to /show
