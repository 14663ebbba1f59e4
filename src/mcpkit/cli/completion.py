"""`mcpkit completion bash|zsh|fish`: a completion script made from the parser itself, so it
knows every subcommand and option there is (files complete as the shell does by default).

    eval "$(mcpkit completion bash)"              # in ~/.bashrc
    mcpkit completion fish > ~/.config/fish/completions/mcpkit.fish
"""

from __future__ import annotations

import argparse


def _commands(parser: argparse.ArgumentParser) -> dict[str, list[str]]:
    """Subcommand -> its options ("" -> the top level's)."""
    found: dict[str, list[str]] = {"": _options(parser)}
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, sub in action.choices.items():
                found[name] = _options(sub)
    return found


def _options(parser: argparse.ArgumentParser) -> list[str]:
    return sorted(o for a in parser._actions for o in a.option_strings if o.startswith("--"))


def script(shell: str, parser: argparse.ArgumentParser) -> str:
    """The script for `shell` (bash, zsh or fish)."""
    commands = _commands(parser)
    names = " ".join(name for name in commands if name)
    if shell == "fish":
        return _fish(commands)
    cases = "\n".join(
        f'        {name}) opts="{" ".join(options)}" ;;'
        for name, options in commands.items()
        if name
    )
    bash = f"""_mcpkit() {{
    local cur="${{COMP_WORDS[COMP_CWORD]}}" command="" word
    for word in "${{COMP_WORDS[@]:1:COMP_CWORD-1}}"; do
        case "$word" in -*) ;; *) command="$word"; break ;; esac
    done
    local opts=""
    case "$command" in
        "") opts="{" ".join(commands[""])}"
            if [[ "$cur" != -* ]]; then
                COMPREPLY=($(compgen -W "{names}" -- "$cur")); return
            fi ;;
{cases}
    esac
    if [[ "$cur" == -* ]]; then
        COMPREPLY=($(compgen -W "$opts" -- "$cur"))
    else
        COMPREPLY=($(compgen -f -- "$cur"))
    fi
}}
"""
    if shell == "zsh":
        return (
            "autoload -U +X bashcompinit && bashcompinit\n"
            + bash
            + ("complete -o default -F _mcpkit mcpkit\n")
        )
    return bash + "complete -o default -F _mcpkit mcpkit\n"


def _fish(commands: dict[str, list[str]]) -> str:
    lines = ["complete -c mcpkit -f"]
    names = " ".join(name for name in commands if name)
    lines.append(f'complete -c mcpkit -n "not __fish_seen_subcommand_from {names}" -a "{names}"')
    for name, options in commands.items():
        condition = (
            f"not __fish_seen_subcommand_from {names}"
            if not name
            else f"__fish_seen_subcommand_from {name}"
        )
        for option in options:
            lines.append(f'complete -c mcpkit -n "{condition}" -l {option[2:]}')
        if name:
            lines.append(f'complete -c mcpkit -n "{condition}" -F')
    return "\n".join(lines) + "\n"
