"""One rule for the host's callbacks: each is told which server it is about, wherever it is
given (`HostServers(elicitation=...)` or among `client_options`), in both eras, with real
stdio servers that elicit and log; a callback that cannot take the server is refused when the
host is built, not at the first request mid-call."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import pytest

from mcpkit.client import Elicitation
from mcpkit.host import Host, HostServers, load_config

SERVER = str(Path(__file__).with_name("host_server.py"))
CONFIG = load_config(
    {
        "mcpServers": {
            name: {"command": sys.executable, "args": [SERVER, name]} for name in ("alpha", "beta")
        }
    }
)


async def ask_user(server: str, params: Any) -> dict[str, Any]:
    return {"action": "accept", "content": {"name": f"asked by {server}: {params.message}"}}


@pytest.mark.parametrize("mode", ["handshake", "per-request"])
@pytest.mark.parametrize("where", ["keyword", "client_options", "client_options as Elicitation"])
async def test_an_elicitation_handler_gets_the_server_wherever_it_is_given(
    mode: str, where: str
) -> None:
    logged: list[tuple[str, str]] = []
    options: dict[str, Any] = {"mode": mode, "on_log": lambda s, p: logged.append((s, p.data))}
    keyword: dict[str, Any] = {}
    if where == "keyword":
        keyword["elicitation"] = ask_user
    elif where == "client_options":
        options["elicitation"] = ask_user
    else:
        options["elicitation"] = Elicitation(ask_user, form=True)
    servers = HostServers(CONFIG, client_options=options, **keyword)
    try:
        await servers.start()
        for name in ("alpha", "beta"):
            result = await servers.client(name).call_tool("ask_user")
            assert not result.is_error, result
            assert f"accept: {{'name': 'asked by {name}: your name?'}}" in result.content[0].text  # type: ignore[union-attr]
        await servers.client("beta").call_tool("flood", {"n": 1})
        assert ("beta", "line 0") in logged
    finally:
        await servers.aclose()


def one(params: Any) -> dict[str, Any]:
    return {"action": "decline"}


def test_a_callback_that_cannot_take_the_server_is_refused_when_configured() -> None:
    with pytest.raises(TypeError, match=r"elicitation one\(params\) must take \(server, params\)"):
        HostServers(CONFIG, client_options={"elicitation": one})
    with pytest.raises(TypeError, match=r"must take \(server, params\)"):
        HostServers(CONFIG, elicitation=one)
    with pytest.raises(TypeError, match=r"sampling .* must take \(server, params\)"):
        HostServers(CONFIG, client_options={"sampling": Elicitation(one)})
    with pytest.raises(TypeError, match=r"on_notification .* must take \(server, method, params"):
        HostServers(CONFIG, client_options={"on_notification": lambda method, params: None})
    with pytest.raises(TypeError, match="elicitation is given twice"):
        HostServers(CONFIG, elicitation=ask_user, client_options={"elicitation": ask_user})
    with pytest.raises(TypeError, match=r"elicit one\(params\) must take \(server, params\)"):
        Host(CONFIG, elicit=one)
    with pytest.raises(TypeError, match=r"elicitation in client_options: give Host\(elicit="):
        Host(CONFIG, client_options={"elicitation": ask_user})
    HostServers(CONFIG, elicitation=lambda server, params, extra=None: params)  # fits
