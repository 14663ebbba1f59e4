"""Which servers a host runs, from the configuration files people already have.

Three shapes are read, and told apart by their top-level key:

- `mcpServers` (Claude Desktop, Cursor, Claude Code's `.mcp.json`, FastMCP): a server is a
  command (`command`, `args`, `env`, `cwd`) or a remote one (`url`, with `type` or `transport`
  "http" / "streamable-http" / "sse", and `headers`). No type and a `url` means Streamable
  HTTP; a URL path ending in `/sse` means the 2024-11-05 HTTP+SSE transport.
- `servers` (VS Code's `mcp.json`): `type` "stdio" / "http" / "sse", the same fields, and
  `inputs` (secrets asked of the user, referenced as `${input:ID}`).
- a plain dict of either shape, from Python.

Values of `command`, `args`, `env`, `cwd`, `url` and `headers` expand `${VAR}`, `${env:VAR}` and
`${VAR:-default}` from the environment and `${input:ID}` through the `ask` callback. A variable
that is unset (with no default) is an error for that server, not a literal `${VAR}` sent on.

Keys this module does not know are kept (`ServerConfig.extra`), never dropped. A bad entry is a
`ConfigError` naming the server and the field; it is recorded in `HostConfig.errors` and every
other server is still read (a host starts the good ones). Per server, `disabled: true` keeps it
configured but not started, and `allowTools` / `denyTools` (lists of tool names) filter what
the host offers of it, and `roots` (paths or URIs) are the roots offered to that server alone.
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

import orjson

from mcpkit.errors import MCPError

JSONObject = dict[str, Any]
Transport = Literal["stdio", "http", "sse"]
# Keys read into a ServerConfig; anything else lands in `extra`.
_KNOWN = frozenset(
    {
        "type",
        "transport",
        "command",
        "args",
        "env",
        "cwd",
        "url",
        "headers",
        "disabled",
        "allowTools",
        "denyTools",
        "roots",
    }
)
_TYPES: dict[str, Transport] = {
    "stdio": "stdio",
    "http": "http",
    "streamable-http": "http",
    "streamableHttp": "http",
    "sse": "sse",
}
_VARIABLE = re.compile(r"\$\{([^}]*)\}")


class ConfigError(MCPError, ValueError):
    """A server entry that cannot be used: which server, which field, what is wrong."""

    def __init__(self, server: str, field: str | None, problem: str) -> None:
        where = f"server {server!r}" + (f", field {field!r}" if field else "")
        super().__init__(f"{where}: {problem}")
        self.server = server
        self.field = field
        self.problem = problem


@dataclass(frozen=True, slots=True)
class InputSpec:
    """A VS Code `inputs` entry: a value to ask the user for (`password`: do not echo it)."""

    id: str
    description: str = ""
    password: bool = False
    raw: JSONObject = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class ServerConfig:
    """One server as configured (values expanded)."""

    name: str
    transport: Transport
    command: str | None = None
    args: tuple[str, ...] = ()
    env: Mapping[str, str] = field(default_factory=dict)
    cwd: str | None = None
    url: str | None = None
    headers: Mapping[str, str] = field(default_factory=dict)
    disabled: bool = False
    allow_tools: frozenset[str] | None = None
    deny_tools: frozenset[str] = frozenset()
    roots: tuple[str, ...] | None = None  # paths or URIs offered to this server alone
    extra: Mapping[str, Any] = field(default_factory=dict)  # keys kept as they were

    def offers(self, tool: str) -> bool:
        """Whether the host offers this server's tool `tool` (allow / deny lists)."""
        if tool in self.deny_tools:
            return False
        return self.allow_tools is None or tool in self.allow_tools

    def client_options(self) -> JSONObject:
        """Keyword arguments for `mcpkit.Client` besides the target (see `target`)."""
        options: JSONObject = {} if self.roots is None else {"roots": list(self.roots)}
        if self.transport == "stdio":
            return {**options, "env": dict(self.env) or None, "cwd": self.cwd}
        from mcpkit.client import HTTPOptions

        options["http"] = HTTPOptions(headers=dict(self.headers) or None)
        if self.transport == "sse":
            options["mode"] = "handshake"  # HTTP+SSE is a handshake-era transport
        return options

    @property
    def target(self) -> str | list[str]:
        """What `mcpkit.Client` connects to: the argv, or the URL."""
        if self.transport == "stdio":
            assert self.command is not None
            return [self.command, *self.args]
        assert self.url is not None
        return self.url


@dataclass(frozen=True, slots=True)
class HostConfig:
    """The servers read (by name, in file order), the entries that could not be, and the
    VS Code inputs declared."""

    servers: dict[str, ServerConfig]
    errors: dict[str, ConfigError]
    inputs: dict[str, InputSpec]


def load_config(
    source: str | os.PathLike[str] | Mapping[str, Any],
    *,
    environ: Mapping[str, str] | None = None,
    ask: Callable[[InputSpec], str | None] | None = None,
) -> HostConfig:
    """Read a configuration file (JSON) or a dict. `environ` (default `os.environ`) expands
    `${VAR}`; `ask` answers `${input:ID}` (VS Code), asked once per ID (None: no answer, and the
    servers that need it are errors).

    Raises ConfigError (server "*") for a file that is not JSON or has neither `mcpServers`
    nor `servers`, OSError for a file that cannot be read; a bad server entry is reported in
    `errors` instead.
    """
    if isinstance(source, Mapping):
        data: Any = source
    else:
        text = Path(source).read_bytes()
        try:
            data = orjson.loads(text)
        except orjson.JSONDecodeError as exc:
            raise ConfigError("*", None, f"{os.fspath(source)} is not JSON: {exc}") from None
    if not isinstance(data, Mapping):
        raise ConfigError("*", None, "a configuration is a JSON object")
    key = "mcpServers" if "mcpServers" in data else "servers" if "servers" in data else None
    if key is None:
        raise ConfigError("*", None, "no `mcpServers` (or VS Code `servers`) object found")
    entries = data[key]
    if not isinstance(entries, Mapping):
        raise ConfigError("*", key, "must be an object of servers by name")
    inputs = _inputs(data.get("inputs"))
    expand = _Expander(os.environ if environ is None else environ, inputs, ask)
    servers: dict[str, ServerConfig] = {}
    errors: dict[str, ConfigError] = {}
    for name, entry in entries.items():
        try:
            servers[str(name)] = _server(str(name), entry, expand)
        except ConfigError as exc:
            errors[str(name)] = exc
    return HostConfig(servers, errors, inputs)


def _inputs(value: Any) -> dict[str, InputSpec]:
    found: dict[str, InputSpec] = {}
    for item in value if isinstance(value, list) else ():
        if isinstance(item, Mapping) and isinstance(item.get("id"), str):
            description = item.get("description")
            found[item["id"]] = InputSpec(
                item["id"],
                description if isinstance(description, str) else "",
                item.get("password") is True,
                dict(item),
            )
    return found


def _server(name: str, entry: Any, expand: _Expander) -> ServerConfig:
    if not isinstance(entry, Mapping):
        raise ConfigError(name, None, "a server entry must be an object")
    transport = _transport(name, entry)

    def text(key: str) -> str | None:
        return _string(name, entry, key, expand)

    extra = {k: v for k, v in entry.items() if k not in _KNOWN}
    common: JSONObject = {
        "allow_tools": _names(name, entry, "allowTools"),
        "deny_tools": _names(name, entry, "denyTools") or frozenset(),
        "roots": _strings(name, entry, "roots", expand) if "roots" in entry else None,
        "extra": extra,
    }
    disabled = entry.get("disabled", False)
    if not isinstance(disabled, bool):
        raise ConfigError(name, "disabled", "must be true or false")
    if transport == "stdio":
        command = text("command")
        if not command:
            raise ConfigError(name, "command", "a stdio server needs a command")
        return ServerConfig(
            name,
            "stdio",
            command=command,
            args=_strings(name, entry, "args", expand),
            env=_table(name, entry, "env", expand),
            cwd=text("cwd"),
            disabled=disabled,
            **common,
        )
    url = text("url")
    if not url or not url.startswith(("http://", "https://")):
        raise ConfigError(name, "url", f"a remote server needs an http(s) URL, not {url!r}")
    return ServerConfig(
        name,
        transport,
        url=url,
        headers=_table(name, entry, "headers", expand),
        disabled=disabled,
        **common,
    )


def _transport(name: str, entry: Mapping[str, Any]) -> Transport:
    declared = entry.get("type", entry.get("transport"))
    if declared is None:
        if "command" in entry:
            return "stdio"
        url = entry.get("url")
        if isinstance(url, str):
            return "sse" if url.split("?", 1)[0].rstrip("/").endswith("/sse") else "http"
        raise ConfigError(name, None, "neither a `command` nor a `url`")
    found = _TYPES.get(declared) if isinstance(declared, str) else None
    if found is None:
        key = "type" if "type" in entry else "transport"
        raise ConfigError(name, key, f"{declared!r} is not stdio, http or sse")
    return found


def _string(name: str, entry: Mapping[str, Any], key: str, expand: _Expander) -> str | None:
    value = entry.get(key)
    if value is None:
        return None
    if not isinstance(value, str):
        raise ConfigError(name, key, "must be a string")
    return expand(name, key, value)


def _strings(name: str, entry: Mapping[str, Any], key: str, expand: _Expander) -> tuple[str, ...]:
    value = entry.get(key, [])
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise ConfigError(name, key, "must be a list of strings")
    return tuple(expand(name, key, v) for v in value)


def _table(name: str, entry: Mapping[str, Any], key: str, expand: _Expander) -> dict[str, str]:
    value = entry.get(key, {})
    if not isinstance(value, Mapping) or not all(
        isinstance(k, str) and isinstance(v, str | int | float | bool) for k, v in value.items()
    ):
        raise ConfigError(name, key, "must be an object of string values")
    return {k: expand(name, f"{key}.{k}", str(v)) for k, v in value.items()}


def _names(name: str, entry: Mapping[str, Any], key: str) -> frozenset[str] | None:
    value = entry.get(key)
    if value is None:
        return None
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise ConfigError(name, key, "must be a list of tool names")
    return frozenset(value)


class _Expander:
    """`${VAR}`, `${env:VAR}`, `${VAR:-default}` and `${input:ID}` in one value."""

    def __init__(
        self,
        environ: Mapping[str, str],
        inputs: dict[str, InputSpec],
        ask: Callable[[InputSpec], str | None] | None,
    ) -> None:
        self._environ = environ
        self._inputs = inputs
        self._ask = ask
        self._answers: dict[str, str | None] = {}

    def __call__(self, server: str, field_name: str, value: str) -> str:
        def replace(match: re.Match[str]) -> str:
            return self._value(server, field_name, match.group(1))

        return _VARIABLE.sub(replace, value)

    def _value(self, server: str, field_name: str, reference: str) -> str:
        if reference.startswith("input:"):
            return self._input(server, field_name, reference[6:])
        name, _, default = reference.removeprefix("env:").partition(":-")
        found = self._environ.get(name)
        if found is not None:
            return found
        if ":-" in reference:
            return default
        raise ConfigError(server, field_name, f"${{{reference}}}: {name} is not set")

    def _input(self, server: str, field_name: str, input_id: str) -> str:
        spec = self._inputs.get(input_id)
        if spec is None:
            raise ConfigError(server, field_name, f"${{input:{input_id}}} is not in `inputs`")
        if self._ask is None:
            raise ConfigError(
                server, field_name, f"${{input:{input_id}}} needs an answer (no `ask` given)"
            )
        if input_id not in self._answers:
            self._answers[input_id] = self._ask(spec)  # asked once, answered or not
        answer = self._answers[input_id]
        if answer is None:
            raise ConfigError(server, field_name, f"${{input:{input_id}}} was not answered")
        return answer
