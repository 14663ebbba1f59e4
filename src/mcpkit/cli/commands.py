"""What each talking subcommand does once the arguments are parsed."""

from __future__ import annotations

import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import orjson

from mcpkit.cli.auth import http_options
from mcpkit.cli.configured import configured_server
from mcpkit.cli.loading import UsageError, target_for
from mcpkit.cli.questions import answering
from mcpkit.cli.render import ProgressBar, as_json, content, print_result, table
from mcpkit.client import Client
from mcpkit.host.visible import json_text, visible

JSONObject = dict[str, Any]
_LISTS = {  # flag -> (method, result key)
    "tools": ("tools/list", "tools"),
    "resources": ("resources/list", "resources"),
    "templates": ("resources/templates/list", "resourceTemplates"),
    "prompts": ("prompts/list", "prompts"),
}
_PAGE_CAP = 1000


async def run_command(args: Any) -> int:
    command = {
        "list": list_items,
        "call": call_tool,
        "read": read_resource,
        "prompt": get_prompt,
        "task": task_command,
    }
    async with connect(args) as client:
        return await command[args.command](client, args)


@asynccontextmanager
async def connect(args: Any) -> AsyncIterator[Client]:
    env = dict(pair_of(item, "--env") for item in args.env)
    options: JSONObject = {"mode": getattr(args, "mode", "auto"), "cwd": args.cwd}
    configured = configured_server(args.target)
    if configured is None:
        target: Any = target_for(args.target)
        options["http"] = await http_options(args)
    else:  # CONFIG.json#NAME: the entry's own options, the command line's on top
        target, entry = configured
        env = {**(entry.pop("env", None) or {}), **env}
        options = {**options, **entry, "cwd": args.cwd or entry.get("cwd")}
    try:
        client = Client(
            target,
            timeout=args.timeout,
            env=env or None,
            **options,
            # A tool may ask the user (elicitation), in a call, a read or a prompt: ask.
            elicitation=answering(args.target),
            on_log=show_log if getattr(args, "log_level", None) else None,
        )
    except ValueError as exc:
        raise UsageError(str(exc)) from None
    async with client:
        if getattr(args, "log_level", None):
            await client.set_logging_level(args.log_level)
        yield client


def show_log(params: Any) -> None:
    """A server's log message on stderr (stdout keeps only the result), made visible."""
    data = params.data if isinstance(params.data, str) else orjson.dumps(params.data).decode()
    logger = f" {params.logger}:" if params.logger else ""
    print(visible(f"[{params.level}]{logger} {data}", lines=True), file=sys.stderr, flush=True)


def pair_of(item: str, what: str) -> tuple[str, str]:
    key, sep, value = item.partition("=")
    if not sep or not key:
        raise UsageError(f"{what} expects key=value, got {item!r}")
    return key, value


def parse_arguments(items: list[str], exact: str | None) -> JSONObject:
    """key=value pairs, each value JSON where it parses (`n=3` is 3, `s=hi` is "hi")."""
    if exact is not None:
        try:
            arguments = orjson.loads(exact)
        except orjson.JSONDecodeError as exc:
            raise UsageError(f"--args is not valid JSON: {exc}") from exc
        if not isinstance(arguments, dict):
            raise UsageError("--args must be a JSON object")
        return arguments
    parsed: JSONObject = {}
    for item in items:
        key, raw = pair_of(item, "arguments")
        try:
            parsed[key] = orjson.loads(raw)
        except orjson.JSONDecodeError:
            parsed[key] = raw
    return parsed


async def list_items(client: Client, args: Any) -> int:
    kinds = [kind for kind in _LISTS if getattr(args, kind)] or ["tools"]
    collected: dict[str, list[JSONObject]] = {}
    for kind in kinds:
        method, key = _LISTS[kind]
        collected[kind] = await all_pages(client, method, key)
    if args.json:
        as_json(collected, sys.stdout)
        return 0
    for kind, items in collected.items():
        if len(kinds) > 1:
            print(f"{kind}:")
        rows = [(label(item), marks(kind, item) + describe(item)) for item in items]
        if kind == "tools" and (args.input_schema or args.output_schema):
            _with_schemas(rows, items, args)
        else:
            table(rows, sys.stdout)
    return 0


def _with_schemas(rows: list[tuple[str, str]], tools: list[JSONObject], args: Any) -> None:
    """Each tool's row, then its schemas (`--input-schema`, `--output-schema`): indented JSON
    under it on a terminal, on the row itself when piped (one line per tool for grep)."""
    asked = [key for flag, key in ((args.input_schema, "inputSchema"),
             (args.output_schema, "outputSchema")) if flag]  # fmt: skip
    on_terminal = sys.stdout.isatty()
    for (name, text), tool in zip(rows, tools, strict=True):
        present = [key for key in asked if key in tool]
        if not on_terminal:
            shown = "".join(f" {key}: {orjson.dumps(tool[key]).decode()}" for key in present)
            table([(name, text + shown)], sys.stdout)
            continue
        table([(name, text)], sys.stdout)
        for key in present:
            indented = json_text(orjson.dumps(tool[key], option=orjson.OPT_INDENT_2).decode())
            print(f"  {key}:\n" + "\n".join("    " + line for line in indented.splitlines()))


def describe(item: JSONObject) -> str:
    return str(item.get("description") or item.get("title") or "")


def marks(kind: str, item: JSONObject) -> str:
    """`[app only] [view ui://...] ` before a tool's description: an MCP Apps tool that only
    its server's views may call (visibility without "model"), and the view it renders in."""
    if kind != "tools":
        return ""
    from mcpkit.protocol.apps import tool_ui

    ui = tool_ui(item.get("_meta"))
    said = []
    if not ui.for_model:
        said.append("app only" if ui.for_app else "hidden: its visibility names no one")
    if ui.resource_uri is not None:
        said.append(f"view {ui.resource_uri}")
    return "".join(f"[{mark}] " for mark in said)


def label(item: JSONObject) -> str:
    # Resources are known by their URI; tools and prompts by their name.
    return str(item.get("uri") or item.get("uriTemplate") or item.get("name") or "?")


async def all_pages(client: Client, method: str, key: str) -> list[JSONObject]:
    items: list[JSONObject] = []
    cursor = None
    for _ in range(_PAGE_CAP):
        page = await client.request(method, None if cursor is None else {"cursor": cursor})
        items.extend(page.get(key, []))
        cursor = page.get("nextCursor")
        if not cursor:
            return items
    raise UsageError(f"{method} did not end after {_PAGE_CAP} pages")


async def call_tool(client: Client, args: Any) -> int:
    from mcpkit.cli import tasks

    arguments = parse_arguments(args.arguments, args.json_args)
    bar = ProgressBar()
    try:
        result = await tasks.call(client, args.tool, arguments, bar)
    finally:
        bar.close()
    return print_result(result, args.json)


async def task_command(client: Client, args: Any) -> int:
    from mcpkit.cli import tasks

    return await tasks.task_command(client, args)


async def read_resource(client: Client, args: Any) -> int:
    result = await client.request("resources/read", {"uri": args.uri})
    if args.json:
        as_json(result, sys.stdout)
        return 0
    for item in result.get("contents", []):
        if "text" in item:
            print(visible(str(item["text"]), lines=True))
        else:
            blob = f"[{item.get('mimeType', 'binary')}, base64 blob of {item.get('uri')}]"
            print(visible(blob))
    return 0


async def get_prompt(client: Client, args: Any) -> int:
    arguments = dict(pair_of(item, "arguments") for item in args.arguments)
    result = await client.request("prompts/get", {"name": args.name, "arguments": arguments})
    if args.json:
        as_json(result, sys.stdout)
        return 0
    for message in result.get("messages", []):
        print(visible(f"[{message.get('role')}]"))
        block = message.get("content", {})
        content(block if isinstance(block, list) else [block], sys.stdout)
    return 0
