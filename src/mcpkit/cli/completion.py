"""`mcpkit completion bash|zsh|fish`: a completion script made from the parser itself, so it
knows every subcommand, option and value there is: each command's options; the values of an
option that has a fixed set (`--transport`, `--log-level`, and `--mode`: auto, handshake,
per-request or a per-request revision); a command's first word when it is one of a set (the
client `install` configures, the shell `completion` writes for, `task get|result|cancel`,
`registry server-json`). Other words complete as files.

    eval "$(mcpkit completion bash)"              # in ~/.bashrc
    mcpkit completion fish > ~/.config/fish/completions/mcpkit.fish
"""

from __future__ import annotations

import argparse
from dataclasses import dataclass, field

from mcpkit.types.versions import PER_REQUEST_VERSIONS

# Values of options that take any text but have usual ones (argparse has no choices for them).
SUGGESTED = {"--mode": ["auto", "handshake", "per-request", *PER_REQUEST_VERSIONS]}


@dataclass
class Command:
    """What completes after a subcommand ("" : the top level)."""

    options: list[str] = field(default_factory=list)
    values: dict[str, list[str]] = field(default_factory=dict)  # option -> its values
    words: list[str] = field(default_factory=list)  # its first word's values (none: files)


def commands(parser: argparse.ArgumentParser) -> dict[str, Command]:
    """Subcommand -> what completes after it ("" -> the top level's options)."""
    top = sorted(o for a in parser._actions for o in a.option_strings if o.startswith("--"))
    found = {"": Command(options=top)}
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            found[""].words = list(action.choices)
            for name, sub in action.choices.items():
                found[name] = _command(sub)
    return found


def _command(parser: argparse.ArgumentParser) -> Command:
    command = Command()
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):  # `registry server-json ...`
            command.words = command.words or list(action.choices)
            for sub in action.choices.values():
                inner = _command(sub)
                command.options += inner.options
                command.values.update(inner.values)
            continue
        longs = [o for o in action.option_strings if o.startswith("--")]
        values = [str(c) for c in action.choices or ()] or SUGGESTED.get(longs[0] if longs else "")
        if not action.option_strings and values and not command.words:
            command.words = list(values)
        for option in longs:
            command.options.append(option)
            if values:
                command.values[option] = list(values)
    command.options = sorted(set(command.options))
    return command


def taking_a_value(parser: argparse.ArgumentParser) -> list[str]:
    """The options that take a value (the word after one is not a command's word); one that is
    a flag in another command (`--version`) is left out."""
    takes: set[str] = set()
    flags: set[str] = set()
    parsers = [parser]
    while parsers:
        current = parsers.pop()
        for action in current._actions:
            if isinstance(action, argparse._SubParsersAction):
                parsers.extend(action.choices.values())
            else:
                (flags if action.nargs == 0 else takes).update(action.option_strings)
    return sorted(takes - flags)


def script(shell: str, parser: argparse.ArgumentParser) -> str:
    """The script for `shell` (bash, zsh or fish)."""
    found = commands(parser)
    if shell == "fish":
        return _fish(found)
    bash = _bash(found, taking_a_value(parser))
    if shell == "zsh":
        return "autoload -U +X bashcompinit && bashcompinit\n" + bash
    return bash


def _words(items: list[str]) -> str:
    return " ".join(items)


def _bash(found: dict[str, Command], takes: list[str]) -> str:
    cases = []
    for name, command in found.items():
        values = "".join(
            f'\n                {option}) values="{_words(items)}" ;;'
            for option, items in command.values.items()
        )
        prev = f'\n            case "$prev" in{values}\n            esac' if values else ""
        label = name or '""'
        opts, words = _words(command.options), _words(command.words)
        cases.append(f'        {label}) opts="{opts}"; words="{words}"{prev} ;;')
    body = "\n".join(cases)
    return f"""_mcpkit() {{
    local cur="${{COMP_WORDS[COMP_CWORD]}}" prev="${{COMP_WORDS[COMP_CWORD-1]}}"
    local command="" word skip="" given=0 takes=" {_words(takes)} "
    # The subcommand, and how many words it has been given (an option's value is none).
    for word in "${{COMP_WORDS[@]:1:COMP_CWORD-1}}"; do
        if [[ -n "$skip" ]]; then skip=""; continue; fi
        case "$word" in
            -*) [[ "$takes" == *" $word "* ]] && skip=1 ;;
            *) if [[ -z "$command" ]]; then command="$word"; else given=$((given + 1)); fi ;;
        esac
    done
    local opts="" words="" values=""
    case "$command" in
{body}
    esac
    if [[ -n "$values" ]]; then
        COMPREPLY=($(compgen -W "$values" -- "$cur"))
    elif [[ "$cur" == -* ]]; then
        COMPREPLY=($(compgen -W "$opts" -- "$cur"))
    elif [[ -n "$words" && $given -eq 0 ]]; then
        COMPREPLY=($(compgen -W "$words" -- "$cur"))
    else
        COMPREPLY=($(compgen -f -- "$cur"))
    fi
}}
complete -o default -F _mcpkit mcpkit
"""


def _fish(found: dict[str, Command]) -> str:
    names = _words(found[""].words)
    top = f"not __fish_seen_subcommand_from {names}"
    lines = ["complete -c mcpkit -f", f'complete -c mcpkit -n "{top}" -a "{names}"']
    for name, command in found.items():
        seen = f"__fish_seen_subcommand_from {name}" if name else top
        for option in command.options:
            values = command.values.get(option)
            given = f' -x -a "{_words(values)}"' if values else ""
            lines.append(f'complete -c mcpkit -n "{seen}" -l {option[2:]}{given}')
        if not name:
            continue
        if command.words:
            chosen = f"__fish_seen_subcommand_from {_words(command.words)}"
            lines.append(
                f'complete -c mcpkit -n "{seen}; and not {chosen}" -a "{_words(command.words)}"'
            )
            seen = f"{seen}; and {chosen}"
        lines.append(f'complete -c mcpkit -n "{seen}" -F')
    return "\n".join(lines) + "\n"
