"""Servers' sampling requests served by the host's models: labelled with the server, approved
by the user (request and completion), the model chosen from modelPreferences, includeContext
kept within the host's ceiling (a server asking for allServers does not get another server's
context unless the application allows it), and the spec's tool-loop checks."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import pytest

from mcpkit.errors import ProtocolError
from mcpkit.host.consent import Approval, ApprovalRequest, ConsentPolicy, Decision
from mcpkit.host.host import Host
from mcpkit.host.models import ModelInfo
from mcpkit.host.providers import ModelRequest, ScriptedProvider
from mcpkit.host.sampling import HostSampler
from tests.clock import FakeClock

SERVER = str(Path(__file__).with_name("host_server.py"))


def config(*names: str) -> dict[str, Any]:
    servers = {name: {"command": sys.executable, "args": [SERVER, name]} for name in names}
    return {"mcpServers": servers}


def echo_system(request: ModelRequest) -> str:
    return f"system was: {request.system}"


async def test_sampling_is_approved_labelled_and_confined_to_the_asking_servers_context() -> None:
    asked: list[ApprovalRequest] = []

    def approve(request: ApprovalRequest) -> Approval:
        asked.append(request)
        return Approval(True)

    model = ScriptedProvider(echo_system)
    async with Host(config("alpha", "beta"), provider=model, approve=approve) as host:
        await host.share("memo://alpha", server="alpha")
        await host.share("memo://beta", server="beta")
        result = await host.tools.call_tool(
            "alpha__ask_model", {"include": "allServers"}, consent=False
        )
        text = result.structured_content["content"]["text"]
        assert "the private memo of alpha" in text
        assert "the private memo of beta" not in text  # beta's context never reaches alpha
        assert "not instructions" in text  # shared context is marked as data
        assert [(r.kind, r.server) for r in asked] == [
            ("sampling", "alpha"),
            ("sampling_result", "alpha"),
        ]
        assert result.structured_content["model"] == "scripted"

        none = await host.tools.call_tool("beta__ask_model", {"include": "none"}, consent=False)
        assert none.structured_content["content"]["text"] == "system was: None"


async def test_all_servers_context_only_when_the_application_allows_it() -> None:
    model = ScriptedProvider(echo_system)
    consent = ConsentPolicy(rules={"alpha": {"@sampling": "allow"}})
    async with Host(
        config("alpha", "beta"), provider=model, consent=consent, include_context="allServers"
    ) as host:
        await host.share("memo://beta", server="beta")
        result = await host.tools.call_tool(
            "alpha__ask_model", {"include": "allServers"}, consent=False
        )
        assert "the private memo of beta" in result.structured_content["content"]["text"]


async def test_a_refused_request_is_the_spec_error_and_the_model_never_sees_it() -> None:
    model = ScriptedProvider(["never sent"])
    async with Host(
        config("alpha"), provider=model, approve=lambda request: Approval(False)
    ) as host:
        # the server's tool passes the host's error on as its own answer
        with pytest.raises(ProtocolError, match="User rejected sampling request") as raised:
            await host.tools.call_tool("alpha__ask_model", consent=False)
        assert raised.value.code == -1
        assert model.requests == []


async def test_the_model_is_chosen_from_the_servers_hints() -> None:
    fast, smart = ScriptedProvider(lambda r: "fast"), ScriptedProvider(lambda r: "smart")
    models = [
        ModelInfo("small-fast-1", provider="fast", speed=0.9),
        ModelInfo("big-smart-2", provider="smart", intelligence=0.9),
    ]
    consent = ConsentPolicy(sampling=Decision.ALLOW)
    async with Host(
        config("alpha"), provider={"fast": fast, "smart": smart}, models=models, consent=consent
    ) as host:
        result = await host.tools.call_tool("alpha__ask_model", {"hint": "smart"}, consent=False)
        assert result.structured_content["content"]["text"] == "smart"
        assert result.structured_content["model"] == "big-smart-2"
        assert smart.requests[0].model == "big-smart-2" and fast.requests == []
        assert smart.requests[0].max_tokens == 50


@pytest.mark.parametrize(
    ("messages", "problem"),
    [
        (
            [
                {"role": "user", "content": {"type": "text", "text": "hi"}},
                {
                    "role": "assistant",
                    "content": {"type": "tool_use", "id": "1", "name": "t", "input": {}},
                },
                {"role": "user", "content": {"type": "text", "text": "no result"}},
            ],
            "Tool result missing in request",
        ),
        (
            [
                {
                    "role": "assistant",
                    "content": {"type": "tool_use", "id": "1", "name": "t", "input": {}},
                },
                {
                    "role": "user",
                    "content": [
                        {"type": "tool_result", "toolUseId": "1", "content": []},
                        {"type": "text", "text": "and more"},
                    ],
                },
            ],
            "Tool results mixed with other content",
        ),
    ],
)
async def test_a_broken_tool_loop_is_invalid_params(messages: list[Any], problem: str) -> None:
    model = ScriptedProvider(["never"])
    sampler = HostSampler(model, ConsentPolicy(sampling=Decision.ALLOW))
    with pytest.raises(ProtocolError, match=problem) as raised:
        await sampler("alpha", {"messages": messages, "maxTokens": 10})
    assert raised.value.code == -32602
    assert model.requests == []


async def test_a_server_asking_too_often_is_refused() -> None:
    model = ScriptedProvider(lambda r: "ok")
    sampler = HostSampler(model, ConsentPolicy(sampling=Decision.ALLOW), rate_limit=3)
    params = {
        "messages": [{"role": "user", "content": {"type": "text", "text": "hi"}}],
        "maxTokens": 5,
    }
    for _ in range(3):
        await sampler("alpha", params)
    with pytest.raises(ProtocolError, match="at most 3 a minute"):
        await sampler("alpha", params)
    assert (await sampler("beta", params))["content"]["text"] == "ok"  # counted per server


async def test_the_rate_limit_counts_the_last_minute() -> None:
    clock = FakeClock()
    model = ScriptedProvider(lambda r: "ok")
    consent = ConsentPolicy(sampling=Decision.ALLOW)
    sampler = HostSampler(model, consent, rate_limit=2, clock=clock)
    params = {
        "messages": [{"role": "user", "content": {"type": "text", "text": "hi"}}],
        "maxTokens": 5,
    }
    await sampler("alpha", params)
    clock.advance(30)
    await sampler("alpha", params)
    clock.advance(30)  # the first request is a minute old: still counted
    with pytest.raises(ProtocolError, match="at most 2 a minute"):
        await sampler("alpha", params)
    clock.advance(0.5)  # now it is older than a minute: room for one
    assert (await sampler("alpha", params))["content"]["text"] == "ok"
    with pytest.raises(ProtocolError, match="at most 2 a minute"):
        await sampler("alpha", params)


async def test_tools_in_sampling_reach_the_model_and_its_tool_use_goes_back() -> None:
    weather = {"name": "weather", "description": "today's", "inputSchema": {"type": "object"}}
    use = {"type": "tool_use", "id": "t1", "name": "weather", "input": {"city": "Oslo"}}
    model = ScriptedProvider([{"content": [{"type": "text", "text": "checking"}, use]}])
    sampler = HostSampler(model, ConsentPolicy(sampling=Decision.ALLOW))
    params = {
        "messages": [{"role": "user", "content": {"type": "text", "text": "weather?"}}],
        "maxTokens": 100,
        "stopSequences": ["END"],
        "tools": [weather],
        "toolChoice": {"mode": "required"},
    }
    result = await sampler("alpha", params)
    (sent,) = model.requests
    assert list(sent.tools) == [weather] and sent.tool_choice == {"mode": "required"}
    assert list(sent.stop_sequences) == ["END"]
    assert result["stopReason"] == "toolUse"
    assert result["content"] == [{"type": "text", "text": "checking"}, use]
