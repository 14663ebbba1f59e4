"""Multi round-trip requests (2026-07-28), client side: an input_required result is answered
through the client's own sampling / elicitation / roots handlers (all at once) and the
request retried with a new id, the same params, `inputResponses` and the `requestState` echoed
exactly. Against a raw fake server that shows exactly what the client sent.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Iterator
from typing import Any

import orjson
import pytest

from mcpkit import Client
from mcpkit.client import era as era_module
from mcpkit.client.mrtr import InputRequired, InputRequiredError
from mcpkit.errors import InvalidResult
from mcpkit.protocol import Outgoing
from mcpkit.transports.memory import memory_pair

JSONObject = dict[str, Any]
DISCOVERED: JSONObject = {
    "resultType": "complete",
    "supportedVersions": ["2026-07-28"],
    "capabilities": {"tools": {}, "prompts": {}, "resources": {}},
}
ELICIT = {
    "method": "elicitation/create",
    "params": {
        "mode": "form",
        "message": "Name?",
        "requestedSchema": {"type": "object", "properties": {"name": {"type": "string"}}},
    },
}
SAMPLE = {
    "method": "sampling/createMessage",
    "params": {
        "messages": [{"role": "user", "content": {"type": "text", "text": "hi"}}],
        "maxTokens": 5,
    },
}
ROOTS = {"method": "roots/list", "params": {}}
SAMPLED = {"role": "assistant", "content": {"type": "text", "text": "yo"}, "model": "m"}
STATE = 'opaque \u2028 "state" ü =?base64?x?= {"not": "json"'


@pytest.fixture(autouse=True)
def fresh_era_cache() -> Iterator[None]:
    era_module.ERAS.clear()
    yield
    era_module.ERAS.clear()


class Fake:
    """Answers server/discover, then each request with `rounds[method]`'s next answer."""

    def __init__(self, rounds: dict[str, list[JSONObject]] | Callable[[JSONObject], Any]):
        self.rounds = rounds
        self.seen: list[JSONObject] = []
        self.client_end, self._end = memory_pair()
        self._task = asyncio.get_running_loop().create_task(self._serve())

    async def _serve(self) -> None:
        while (data := await self._end.read()) is not None:
            message = orjson.loads(data)
            if "id" not in message:
                continue
            self.seen.append(message)
            if message["method"] == "server/discover":
                result: Any = DISCOVERED
            elif message["method"] == "tools/list":
                result = {"resultType": "complete", "tools": []}
            elif callable(self.rounds):
                result = self.rounds(message)
            else:
                result = self.rounds[message["method"]].pop(0)
            reply = {"jsonrpc": "2.0", "id": message["id"], "result": result}
            self._end.write([Outgoing(orjson.dumps(reply))])

    def sent(self, method: str) -> list[JSONObject]:
        return [m for m in self.seen if m["method"] == method]


def asks(requests: JSONObject | None, state: str | None = None) -> JSONObject:
    result: JSONObject = {"resultType": "input_required"}
    if requests is not None:
        result["inputRequests"] = requests
    if state is not None:
        result["requestState"] = state
    return result


DONE = {"resultType": "complete", "content": [{"type": "text", "text": "done"}]}


async def test_all_inputs_are_gathered_at_once_then_the_request_retried() -> None:
    fake = Fake({"tools/call": [asks({"e": ELICIT, "s": SAMPLE, "r": ROOTS}, STATE), DONE]})
    sampling_started = asyncio.Event()

    async def sample(params: Any) -> JSONObject:
        sampling_started.set()
        return SAMPLED

    async def elicit(params: Any) -> JSONObject:
        await asyncio.wait_for(sampling_started.wait(), 2)  # both run at the same time
        assert params.message == "Name?"
        return {"action": "accept", "content": {"name": "Ada"}}

    async with Client(
        fake.client_end, mode="auto", sampling=sample, elicitation=elicit, roots=["file:///r"]
    ) as client:
        result = await client.call_tool("go", {"x": 1})
    assert result.content[0].text == "done"  # type: ignore[union-attr]
    first, retry = fake.sent("tools/call")
    assert retry["id"] != first["id"]
    assert retry["params"]["name"] == "go"
    assert retry["params"]["arguments"] == {"x": 1}
    assert retry["params"]["requestState"] == STATE  # byte for byte
    assert retry["params"]["inputResponses"] == {
        "e": {"action": "accept", "content": {"name": "Ada"}},
        "s": SAMPLED,
        "r": {"roots": [{"uri": "file:///r"}]},
    }
    envelope = retry["params"]["_meta"]["io.modelcontextprotocol/clientCapabilities"]
    assert set(envelope) == {"sampling", "elicitation", "roots", "extensions"}


async def test_no_state_means_none_is_sent_and_rounds_repeat() -> None:
    fake = Fake(
        {"prompts/get": [asks({"a": ROOTS}), asks({"b": ROOTS}, "s2"), DONE | {"messages": []}]}
    )
    async with Client(fake.client_end, mode="auto", roots=["file:///r"]) as client:
        await client.get_prompt("p", {"k": "v"})
    _first, second, third = fake.sent("prompts/get")
    assert "requestState" not in second["params"]
    assert set(second["params"]["inputResponses"]) == {"a"}
    assert third["params"]["requestState"] == "s2"
    assert set(third["params"]["inputResponses"]) == {"b"}  # only this round's answers
    assert third["params"]["arguments"] == {"k": "v"}


async def test_state_alone_is_retried_at_once() -> None:
    fake = Fake({"resources/read": [asks(None, "wait"), {"contents": []}]})
    async with Client(fake.client_end, mode="auto") as client:
        await client.read_resource("file:///a")
    retry = fake.sent("resources/read")[1]["params"]
    assert retry["requestState"] == "wait"
    assert "inputResponses" not in retry
    assert retry["uri"] == "file:///a"


async def test_a_server_that_keeps_asking_stops_at_the_round_limit() -> None:
    fake = Fake(lambda message: asks({"r": ROOTS}, "again"))
    async with Client(
        fake.client_end, mode="auto", roots=["file:///r"], max_input_rounds=3
    ) as client:
        with pytest.raises(InputRequiredError, match="after 3 rounds"):
            await client.call_tool("loop", {})
    assert len(fake.sent("tools/call")) == 4


async def test_input_the_client_did_not_declare_is_a_clear_error_and_nothing_is_retried() -> None:
    fake = Fake({"tools/call": [asks({"s": SAMPLE})]})
    async with Client(fake.client_end, mode="auto") as client:
        with pytest.raises(InputRequiredError, match="did not declare sampling"):
            await client.call_tool("t", {})
    assert len(fake.sent("tools/call")) == 1


@pytest.mark.parametrize(
    ("method", "result", "problem"),
    [
        ("tools/call", {"resultType": "later", "content": []}, "unknown resultType"),
        ("prompts/list", asks({"r": ROOTS}), "may not answer with resultType input_required"),
        ("tools/call", {"resultType": "input_required"}, "needs inputRequests or requestState"),
    ],
)
async def test_malformed_result_types_are_invalid_results(
    method: str, result: JSONObject, problem: str
) -> None:
    fake = Fake(lambda message: result)
    async with Client(fake.client_end, mode="auto", roots=["file:///r"]) as client:
        with pytest.raises(InvalidResult, match=problem):
            await client.request(method, {"name": "t", "arguments": {}})


async def test_callers_can_drive_the_rounds_themselves() -> None:
    fake = Fake({"tools/call": [asks({"e": ELICIT}, STATE), DONE]})

    async def elicit(params: Any) -> JSONObject:
        return {"action": "decline"}

    async with Client(fake.client_end, mode="auto", elicitation=elicit) as client:
        pending = await client.call_tool("t", {"a": 1}, input_required="return")
        assert isinstance(pending, InputRequired)
        assert pending.request_state == STATE
        assert pending.input_requests == {"e": ELICIT}
        assert pending.params == {"name": "t", "arguments": {"a": 1}}
        answers = await client.answer_input(pending)
        assert answers == {"e": {"action": "decline"}}
        result = await client.call_tool(
            "t", {"a": 1}, input_responses=answers, request_state=pending.request_state
        )
        assert result.content[0].text == "done"  # type: ignore[union-attr]
    retry = fake.sent("tools/call")[1]["params"]
    assert retry["requestState"] == STATE
    assert retry["inputResponses"] == {"e": {"action": "decline"}}


async def test_a_legacy_result_without_result_type_is_complete() -> None:
    fake = Fake(lambda message: {"content": []})
    async with Client(fake.client_end, mode="auto") as client:
        result = await client.call_tool("t", {})
    assert result.content == []


# -- our own server: the same handlers, either era -------------------------------------------


def asking_server() -> Any:
    from pydantic import BaseModel

    from mcpkit import Server
    from mcpkit.server import Context

    class Confirm(BaseModel):
        ok: bool

    server = Server("asking")

    @server.tool()
    async def deploy(target: str, ctx: Context) -> str:
        """Ask the user, the model and the roots, then answer."""
        answer = await ctx.elicit(f"Deploy to {target}?", Confirm)
        reply = await ctx.sample("Say go", max_tokens=5)
        roots = await ctx.list_roots()
        ok = answer.data is not None and answer.data.ok
        return f"{ok} {reply.content.text} {len(roots)}"

    return server


@pytest.mark.parametrize("mode", ["handshake", "2026-07-28"])
async def test_our_server_asks_through_the_same_handlers_in_both_eras(mode: str) -> None:

    async def elicit(params: Any) -> JSONObject:
        return {"action": "accept", "content": {"ok": True}}

    async def sample(params: Any) -> JSONObject:
        return SAMPLED

    async with Client(
        asking_server(), mode=mode, elicitation=elicit, sampling=sample, roots=["file:///r"]
    ) as client:
        assert client.era == ("handshake" if mode == "handshake" else "per-request")
        result = await client.call_tool("deploy", {"target": "prod"})
    assert result.content[0].text == "True yo 1"  # type: ignore[union-attr]
