"""Meta-tests on the public API's signatures (issue 23: the front door is typed).

No public parameter is typed `Any` where a precise type exists, so an editor completes it and
mypy refuses a wrong argument. JSON values are legitimately `Any`: a JSON object spelled
`dict[str, Any]` / `Mapping[str, Any]` passes, as does `Callable[..., Any]` (a user's function
of any signature); every other `Any` is in ALLOWED with its reason. Where a function has
`@overload`s, the overloads are what callers see and what is checked.
"""

from __future__ import annotations

import importlib
import inspect
import re
import typing
from collections.abc import Callable, Iterator
from pathlib import Path

from tests.typecheck import mypy_strict

PUBLIC = (
    "mcpkit",
    "mcpkit.client",
    "mcpkit.host",
    "mcpkit.host.providers",
    "mcpkit.auth",
    "mcpkit.auth.client",
    "mcpkit.auth.server",
    "mcpkit.stores",
    "mcpkit.testing",
)

# Spellings of JSON values and of "any user function": Any is the honest type there.
_LEGITIMATE = re.compile(r"(dict|Mapping)\[str, Any\]|Callable\[\.\.\., Any\]")
_ANY = re.compile(r"\bAny\b")

# "function(parameter)" -> why its Any stays.
ALLOWED = {
    "mcpkit.Context.log(data)": "a log message's data is any JSON value (the spec's `unknown`)",
    "mcpkit.Context.debug(data)": "a log message's data is any JSON value",
    "mcpkit.Context.info(data)": "a log message's data is any JSON value",
    "mcpkit.Context.warning(data)": "a log message's data is any JSON value",
    "mcpkit.Context.error(data)": "a log message's data is any JSON value",
    "mcpkit.client.HTTPAuth.async_auth_flow(request)": (
        "an httpx.Request, named without importing httpx (an optional dependency)"
    ),
    "mcpkit.client.form_errors(content)": "the form's answer as sent: any JSON value",
    "mcpkit.host.AgentEvent.__init__(data)": "the event's payload as the wire carries it (JSON)",
    "mcpkit.auth.JWTVerifier.__init__(keys)": (
        "cryptography public key objects or PEM text; cryptography is optional, not imported "
        "for a type"
    ),
    "mcpkit.testing.call(arguments)": "a tool's arguments are JSON values",
    "mcpkit.auth.client.Tokens.from_json(data)": "a stored JSON document, checked field by field",
    "mcpkit.auth.client.Registration.from_json(data)": (
        "a stored JSON document, checked field by field"
    ),
}


def _signatures(function: Callable[..., object]) -> Iterator[inspect.Signature]:
    overloads = typing.get_overloads(function)
    for each in overloads or [function]:
        try:
            yield inspect.signature(each)
        except (TypeError, ValueError):  # a builtin without a signature
            return


def _callables(package: str) -> Iterator[tuple[str, Callable[..., object]]]:
    module = importlib.import_module(package)
    for name in module.__all__:
        value = getattr(module, name)
        where = f"{package}.{name}"
        if inspect.isclass(value):
            if value.__module__.split(".")[0] != "mcpkit":
                continue
            if inspect.isfunction(value.__init__):  # not object's own
                yield f"{where}.__init__", value.__init__
            for member, attribute in vars(value).items():
                function = getattr(attribute, "__func__", attribute)
                if not member.startswith("_") and inspect.isfunction(function):
                    yield f"{where}.{member}", function
        elif inspect.isfunction(value):
            yield where, value


def _any_parameters() -> dict[str, str]:
    found: dict[str, str] = {}
    seen: set[int] = set()
    for package in PUBLIC:
        for where, function in _callables(package):
            if id(function) in seen:
                continue
            seen.add(id(function))
            for signature in _signatures(function):
                for name, parameter in signature.parameters.items():
                    annotation = parameter.annotation
                    text = annotation if isinstance(annotation, str) else repr(annotation)
                    if _ANY.search(_LEGITIMATE.sub("", text)):
                        found[f"{where}({name})"] = text
    return found


def test_the_walk_sees_the_front_door() -> None:
    names = {where for package in PUBLIC for where, _ in _callables(package)}
    assert {"mcpkit.Client.__init__", "mcpkit.host.Host.agent", "mcpkit.testing.connect"} <= names


def test_no_public_parameter_is_any_without_a_reason() -> None:
    unexplained = {where: text for where, text in _any_parameters().items() if where not in ALLOWED}
    assert unexplained == {}


def test_every_allowed_any_is_still_there() -> None:
    found = _any_parameters()
    assert [where for where in ALLOWED if where not in found] == []


def test_client_keywords_mirror_the_clients_keyword_arguments() -> None:
    from mcpkit import Client
    from mcpkit.client import ClientKeywords, ClientOptions

    parameters = inspect.signature(Client.__init__).parameters
    keywords = {name for name, p in parameters.items() if p.kind is p.KEYWORD_ONLY}
    assert set(ClientKeywords.__annotations__) == keywords
    assert set(ClientOptions.__dataclass_fields__) == keywords


# Each line marked `# wrong` must be refused by mypy, every other line accepted.
SNIPPET = """
import httpx

from mcpkit import Client, Server
from mcpkit.auth.client import OAuth
from mcpkit.auth.server import AuthorizationServer
from mcpkit.client import HTTPOptions
from mcpkit.client import HTTPOptons  # wrong
from mcpkit.errors import ProtocolErrr  # wrong
from mcpkit.host import Host, ServerStat  # wrong
from mcpkit.testing import connect


async def use(server: Server, host: Host, authorization: AuthorizationServer) -> None:
    Client(server)
    Client(["python", "server.py"])
    Client("python server.py", timeout=5)
    Client("http://127.0.0.1:1/mcp", auth=OAuth())
    Client("http://127.0.0.1:1/mcp", http=HTTPOptions(auth=httpx.BasicAuth("a", "b")))
    Client(42)  # wrong
    Client("http://127.0.0.1:1/mcp", auth="a token")  # wrong
    host.agent(system="be brief", max_steps=3)
    host.agent(max_step=3)  # wrong
    authorization.bearer_auth("http://127.0.0.1:1/mcp", required_scopes=frozenset({"mcp"}))
    authorization.bearer_auth("http://127.0.0.1:1/mcp", required_scopes=["mcp"])  # wrong
    async with connect(server, timeout=5):
        pass
    async with connect(server, timout=5):  # wrong
        pass
"""


def test_mypy_refuses_a_wrong_argument_at_the_front_door(tmp_path: Path) -> None:
    checked = mypy_strict(SNIPPET, tmp_path)
    refused = checked.error_lines
    wrong = {n for n, line in enumerate(SNIPPET.splitlines(), 1) if line.endswith("# wrong")}
    assert refused == wrong, checked.stdout
