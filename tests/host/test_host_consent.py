"""The Host's consent, end to end over real servers: `host.tools.call_tool` asks the policy as
the agent does (and `consent=False` is the one way around it); after a rug pull the model is
offered the definition the user approved until the user approves the new one (seen by a local
stand-in for the Anthropic API, through the official SDK); a corrupt consent file stops the
Host when it starts, naming the file without quoting it."""

from __future__ import annotations

import asyncio
import sys
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest

from mcpkit.host import (
    Approval,
    ApprovalRequest,
    ConsentDenied,
    FileDecisionStore,
    Host,
    Remember,
    ServerState,
    Timing,
)
from mcpkit.host.consent import DecisionStoreError
from mcpkit.host.providers import AnthropicProvider
from tests.host.fake_llm import FakeLLM, anthropic_message, fake_llm

SERVER = str(Path(__file__).with_name("host_server.py"))
KEY = "test-key-QWERTY-0123456789"


def config(**servers: dict[str, Any]) -> dict[str, Any]:
    return {
        "mcpServers": {
            name: {"command": sys.executable, "args": [SERVER, name], **extra}
            for name, extra in servers.items()
        }
    }


class Answers:
    """An approval callback answering from a list, keeping what it was asked."""

    def __init__(self, *answers: Approval) -> None:
        self.answers = list(answers)
        self.asked: list[ApprovalRequest] = []

    def __call__(self, request: ApprovalRequest) -> Approval:
        self.asked.append(request)
        return self.answers.pop(0)


async def descriptions(host: Host) -> dict[str, str | None]:
    return {tool.name: tool.item.description for tool in await host.tools.list()}


async def test_host_tools_call_tool_asks_the_policy_and_a_no_runs_nothing() -> None:
    answers = Answers(Approval(False), Approval(True))
    async with Host(config(alpha={}), approve=answers) as host:
        before = await descriptions(host)
        with pytest.raises(ConsentDenied, match="declined"):
            await host.tools.call_tool("alpha__mutate")  # would change target's description
        assert [(r.kind, r.server, r.details.get("tool")) for r in answers.asked] == [
            ("tool", "alpha", "mutate")
        ]
        host.tools.forget("alpha")  # fetch alpha's list again: nothing changed
        assert await descriptions(host) == before

        answer = await host.tools.call_tool("alpha__target", {"text": "yes"})
        assert answer.content[0].text == "alpha: yes"  # type: ignore[union-attr]
        assert len(answers.asked) == 2

        # Trusted code says so: no ask (the callback has no answers left to give).
        answer = await host.tools.call_tool("alpha__target", {"text": "mine"}, consent=False)
        assert answer.content[0].text == "alpha: mine"  # type: ignore[union-attr]
        assert len(answers.asked) == 2


async def test_the_agent_asks_once_per_call_not_twice() -> None:
    from mcpkit.host.providers import ScriptedProvider

    use = {"type": "tool_use", "id": "u1", "name": "alpha__target", "input": {"text": "hi"}}
    model = ScriptedProvider([{"content": [use]}, "done"])
    answers = Answers(Approval(True))
    async with Host(config(alpha={}), provider=model, approve=answers) as host:
        assert await host.agent().send("go") == "done"
    assert len(answers.asked) == 1


@pytest.fixture
async def claude() -> AsyncIterator[tuple[FakeLLM, AnthropicProvider]]:
    async with (
        fake_llm() as fake,
        AnthropicProvider(api_key=KEY, base_url=fake.url, max_retries=0) as provider,
    ):
        yield fake, provider


def calls(name: str, text: str) -> Any:
    use = {"type": "tool_use", "id": f"toolu_{text}", "name": name, "input": {"text": text}}
    return anthropic_message([use], stop_reason="tool_use")


def says(text: str) -> Any:
    return anthropic_message([{"type": "text", "text": text}])


def offered(fake: FakeLLM, request: int) -> dict[str, str]:
    """The description of each tool in the request the model got (Anthropic wire format)."""
    return {tool["name"]: tool["description"] for tool in fake.requests[request].body["tools"]}


async def test_after_a_rug_pull_the_model_sees_the_approved_definition_until_reapproved(
    claude: tuple[FakeLLM, AnthropicProvider],
) -> None:
    fake, provider = claude
    answers = Answers(Approval(True, Remember.SESSION), Approval(True, Remember.SESSION))
    fake.script(
        calls("alpha__target", "one"),
        says("first"),
        says("second, without tools"),
        calls("alpha__target", "three"),
        says("third"),
    )
    timing = Timing(connect_timeout=30)
    async with Host(config(alpha={}), provider=provider, approve=answers, timing=timing) as host:
        agent = host.agent()
        assert await agent.send("one") == "first"
        assert offered(fake, 0)["alpha__target"] == "Echo the text."

        changed = asyncio.Event()
        host.servers.list_listeners.append(lambda server, kind: changed.set())
        await host.tools.call_tool("alpha__mutate", consent=False)  # the rug pull
        await asyncio.wait_for(changed.wait(), 30)
        assert "id_rsa" in (await descriptions(host))["alpha__target"]  # the host knows

        assert await agent.send("two") == "second, without tools"
        assert offered(fake, 2)["alpha__target"] == "Echo the text."  # not the new text
        assert "id_rsa" not in str(fake.requests[2].body["tools"])

        # The model calls it: the user is asked about the change, approves, and from then on
        # the model is offered the definition the user approved.
        assert await agent.send("three") == "third"
        assert len(answers.asked) == 2 and answers.asked[1].changed
        assert "id_rsa" in offered(fake, 4)["alpha__target"]


async def test_a_corrupt_consent_file_stops_the_host_at_start_naming_it(tmp_path: Path) -> None:
    path = tmp_path / "consent.json"
    path.write_text('{"version": 1, "decisions": "sk-secret-QWERTY"')  # cut short
    host = Host(config(alpha={}), store=FileDecisionStore(path))
    with pytest.raises(DecisionStoreError) as raised:
        async with host:
            pass
    message = str(raised.value)
    assert str(path) in message and "not an mcpkit consent file" in message
    assert "sk-secret" not in message  # its content is not quoted
    assert host.servers.status()["alpha"].state is ServerState.DISABLED  # no server was started
