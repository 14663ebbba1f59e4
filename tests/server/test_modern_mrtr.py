"""Multi round-trip requests: the same handler asks the client in both eras.

At 2026-07-28 an ask becomes an input_required answer and the client retries with
inputResponses and the sealed requestState; in the handshake era it is a real request.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import pytest

from mcpkit import Server
from mcpkit.protocol import RequestReceived
from mcpkit.runtime import Principal, Session
from mcpkit.server import Context
from tests.clock import FakeClock

from .peer import connect
from .test_modern_context import RawPeer, call, raw, text

ELICITATION = {"elicitation": {}}
EVERYTHING = {"elicitation": {"form": {}, "url": {}}, "sampling": {"tools": {}}, "roots": {}}


@dataclass
class Name:
    name: str


def survey_server(**options: Any) -> tuple[Server, list[str]]:
    """A tool that elicits a name, then samples a greeting for it."""
    server = Server("survey", **options)
    runs: list[str] = []

    @server.tool()
    async def greet(style: str, ctx: Context) -> str:
        runs.append("start")  # runs again on every round
        who = await ctx.elicit("Your name?", Name)
        if who.data is None:
            return f"no name ({who.action})"
        sampled = await ctx.sample(f"Greet {who.data.name} in a {style} way", max_tokens=20)
        return f"{who.data.name}: {sampled.content.text}"

    return server, runs


def sampled(text: str) -> dict[str, Any]:
    return {"role": "assistant", "content": {"type": "text", "text": text}, "model": "m"}


async def retry(
    peer: RawPeer,
    previous: dict[str, Any],
    answers: dict[str, Any],
    params: dict[str, Any],
    method: str = "tools/call",
    capabilities: dict[str, Any] | None = None,
) -> dict[str, Any]:
    again = {**params, "inputResponses": answers, "requestState": previous["requestState"]}
    return await peer.request(method, again, EVERYTHING if capabilities is None else capabilities)


async def test_elicitation_then_sampling_in_three_rounds() -> None:
    server, runs = survey_server()
    params = call("greet", style="warm")
    async with raw(server) as peer:
        first = await peer.request("tools/call", params, EVERYTHING)
        assert first["resultType"] == "input_required"
        assert "ttlMs" not in first and "cacheScope" not in first
        assert first["_meta"]["io.modelcontextprotocol/serverInfo"]["name"] == "survey"
        assert first["inputRequests"] == {
            "elicit-1": {
                "method": "elicitation/create",
                "params": {
                    "message": "Your name?",
                    "mode": "form",
                    "requestedSchema": {
                        "type": "object",
                        "properties": {"name": {"type": "string"}},
                        "required": ["name"],
                    },
                },
            }
        }
        assert isinstance(first["requestState"], str)

        name = {"action": "accept", "content": {"name": "Ada"}}
        second = await retry(peer, first, {"elicit-1": name}, params)
        assert second["resultType"] == "input_required"
        assert list(second["inputRequests"]) == ["sample-2"]
        asked = second["inputRequests"]["sample-2"]
        assert asked["method"] == "sampling/createMessage"
        assert asked["params"]["maxTokens"] == 20
        assert asked["params"]["messages"][0]["content"]["text"] == "Greet Ada in a warm way"

        # Round 3 sends only the new answer: the name travels in the sealed state.
        third = await retry(peer, second, {"sample-2": sampled("Hello, Ada!")}, params)
        assert third["resultType"] == "complete"
        assert text(third) == "Ada: Hello, Ada!"
    assert runs == ["start"] * 3


async def test_the_same_tool_asks_for_real_in_the_handshake_era() -> None:
    server, runs = survey_server()
    asked: list[str] = []

    def answer(session: Session, request: RequestReceived) -> dict[str, Any]:
        asked.append(request.method)
        if request.method == "elicitation/create":
            return {"action": "accept", "content": {"name": "Bob"}}
        return sampled("Hi Bob")

    async with connect(server, {"elicitation": {}, "sampling": {}}, answer) as peer:
        assert text(await peer.call("greet", style="dry")) == "Bob: Hi Bob"
    assert asked == ["elicitation/create", "sampling/createMessage"]
    assert runs == ["start"]


async def test_answers_are_parsed_as_in_the_handshake_era() -> None:
    server, _ = survey_server()
    params = call("greet", style="warm")
    async with raw(server) as peer:
        first = await peer.request("tools/call", params, EVERYTHING)
        declined = await retry(peer, first, {"elicit-1": {"action": "decline"}}, params)
        assert text(declined) == "no name (decline)"
        misfit = {"action": "accept", "content": {"name": 7}}
        bad = await retry(peer, first, {"elicit-1": misfit}, params)
        assert bad["isError"] is True and "does not fit" in text(bad)


async def test_unanswered_keys_are_asked_again_and_extra_answers_ignored() -> None:
    server, _ = survey_server()
    params = call("greet", style="warm")
    async with raw(server) as peer:
        first = await peer.request("tools/call", params, EVERYTHING)
        again = await retry(peer, first, {"unrelated": {"x": 1}}, params)
        assert list(again["inputRequests"]) == ["elicit-1"]


async def test_a_tampered_request_state_is_refused_and_the_connection_serves_on() -> None:
    server, _ = survey_server()
    params = call("greet", style="warm")
    async with raw(server) as peer:
        first = await peer.request("tools/call", params, EVERYTHING)
        state = first["requestState"]
        forged = state[:-2] + ("AA" if not state.endswith("AA") else "BB")
        error = await peer.error(
            "tools/call",
            {**params, "requestState": forged, "inputResponses": {}},
            EVERYTHING,
        )
        assert error["code"] == -32602
        for bad in (12, {"state": 1}):
            error = await peer.error("tools/call", {**params, "requestState": bad}, EVERYTHING)
            assert error["code"] == -32602
        # Nothing else is harmed: the connection still serves.
        still = await peer.request("tools/call", params, EVERYTHING)
        assert still["resultType"] == "input_required"


async def test_state_is_bound_to_its_request() -> None:
    server, _ = survey_server()

    @server.prompt()
    async def intro(ctx: Context) -> str:
        who = await ctx.elicit("Your name?", Name)
        return f"Introduce {who.data.name if who.data else 'nobody'}"

    params = call("greet", style="warm")
    answer = {"elicit-1": {"action": "accept", "content": {"name": "Ada"}}}
    async with raw(server) as peer:
        first = await peer.request("tools/call", params, EVERYTHING)
        other = call("greet", style="cold")  # other arguments: another request
        error = await peer.error(
            "tools/call", {**other, "requestState": first["requestState"]}, EVERYTHING
        )
        assert error["code"] == -32602
        error = await peer.error(
            "prompts/get",
            {"name": "intro", "requestState": first["requestState"], "inputResponses": answer},
            EVERYTHING,
        )
        assert error["code"] == -32602
        # The prompt's own rounds work.
        asked = await peer.request("prompts/get", {"name": "intro"}, EVERYTHING)
        assert list(asked["inputRequests"]) == ["elicit-1"]
        done = await retry(peer, asked, answer, {"name": "intro"}, "prompts/get")
        assert done["messages"][0]["content"]["text"] == "Introduce Ada"
        assert done["resultType"] == "complete"


async def test_an_expired_request_state_is_refused() -> None:
    clock = FakeClock(1_000_000.0)
    server, _ = survey_server(request_state_ttl=60, clock=clock)
    params = call("greet", style="warm")
    answer = {"elicit-1": {"action": "accept", "content": {"name": "Ada"}}}
    async with raw(server) as peer:
        first = await peer.request("tools/call", params, EVERYTHING)
        clock.advance(30)
        assert (await retry(peer, first, answer, params))["resultType"] == "input_required"
        clock.advance(31)  # 61 s after the first round sealed its state
        error = await peer.error(
            "tools/call",
            {**params, "inputResponses": answer, "requestState": first["requestState"]},
            EVERYTHING,
        )
        assert error["code"] == -32602


async def test_state_is_bound_to_the_principal() -> None:
    server, _ = survey_server()
    params = call("greet", style="warm")
    answer = {"elicit-1": {"action": "accept", "content": {"name": "Ada"}}}
    async with raw(server) as peer:
        transport = peer.server_end
        transport.principal = Principal("alice")
        first = await peer.request("tools/call", params, EVERYTHING)
        transport.principal = Principal("mallory")
        error = await peer.error(
            "tools/call",
            {**params, "inputResponses": answer, "requestState": first["requestState"]},
            EVERYTHING,
        )
        assert error["code"] == -32602
        transport.principal = Principal("alice", client_id="other-app")  # another client
        error = await peer.error(
            "tools/call",
            {**params, "inputResponses": answer, "requestState": first["requestState"]},
            EVERYTHING,
        )
        assert error["code"] == -32602
        transport.principal = Principal("alice")
        assert (await retry(peer, first, answer, params))["resultType"] == "input_required"


@pytest.mark.parametrize(
    ("tool", "capabilities", "required"),
    [
        ("form", {}, {"elicitation": {"form": {}}}),
        ("form", {"elicitation": {"url": {}}}, {"elicitation": {"form": {}}}),
        ("url", {"elicitation": {}}, {"elicitation": {"url": {}}}),
        ("sample", {"roots": {}}, {"sampling": {}}),
        ("sample_tools", {"sampling": {}}, {"sampling": {"tools": {}}}),
        ("roots", {"sampling": {}}, {"roots": {}}),
    ],
)
async def test_missing_client_capabilities_are_32021(
    tool: str, capabilities: dict[str, Any], required: dict[str, Any]
) -> None:
    server = Server("needs")

    @server.tool()
    async def form(ctx: Context) -> str:
        return str(await ctx.elicit("?", {"type": "object", "properties": {}}))

    @server.tool()
    async def url(ctx: Context) -> str:
        return str(await ctx.elicit_url("Sign in", "https://example.com/x", "e-1"))

    @server.tool()
    async def sample(ctx: Context) -> str:
        return str(await ctx.sample("hi"))

    @server.tool()
    async def sample_tools(ctx: Context) -> str:
        tools = [{"name": "t", "inputSchema": {"type": "object"}}]
        return str(await ctx.sample("hi", tools=tools))

    @server.tool()
    async def roots(ctx: Context) -> str:
        return str(await ctx.list_roots())

    async with raw(server) as peer:
        error = await peer.error("tools/call", call(tool), capabilities)
        assert error["code"] == -32021
        assert error["data"] == {"requiredCapabilities": required}
        # Declared, the same call asks instead.
        asked = await peer.request("tools/call", call(tool), EVERYTHING)
        assert asked["resultType"] == "input_required"


async def test_url_elicitation_and_roots_rounds() -> None:
    server = Server("more")

    @server.tool()
    async def both(ctx: Context) -> str:
        done = await ctx.elicit_url("Sign in", "https://example.com/x", "e-1")
        roots = await ctx.list_roots()
        return f"{done.action} {roots[0].uri}"

    async with raw(server) as peer:
        first = await peer.request("tools/call", call("both"), EVERYTHING)
        assert first["inputRequests"]["elicit-1"]["params"] == {
            "mode": "url",
            "message": "Sign in",
            "url": "https://example.com/x",
            "elicitationId": "e-1",
        }
        second = await retry(peer, first, {"elicit-1": {"action": "accept"}}, call("both"))
        assert second["inputRequests"] == {"roots-2": {"method": "roots/list"}}
        roots = {"roots": [{"uri": "file:///w"}]}
        third = await retry(peer, second, {"roots-2": roots}, call("both"))
        assert text(third) == "accept file:///w"


async def test_gather_input_asks_several_things_in_one_round() -> None:
    server = Server("gather")
    asked: list[str] = []

    @server.tool()
    async def plan(ctx: Context) -> str:
        who, idea = await ctx.gather_input(
            ctx.elicit_request("Your name?", Name), ctx.sample_request("An idea?")
        )
        return f"{who.data.name}: {idea.content.text}"

    async with raw(server) as peer:
        first = await peer.request("tools/call", call("plan"), EVERYTHING)
        assert list(first["inputRequests"]) == ["elicit-1", "sample-2"]
        answers = {
            "elicit-1": {"action": "accept", "content": {"name": "Ada"}},
            "sample-2": sampled("Fly"),
        }
        done = await retry(peer, first, answers, call("plan"))
        assert text(done) == "Ada: Fly"
        partial = await retry(peer, first, {"sample-2": sampled("Fly")}, call("plan"))
        assert list(partial["inputRequests"]) == ["elicit-1"]

    def answer(session: Session, request: RequestReceived) -> dict[str, Any]:
        asked.append(request.method)
        if request.method == "elicitation/create":
            return {"action": "accept", "content": {"name": "Bob"}}
        return sampled("Swim")

    async with connect(server, {"elicitation": {}, "sampling": {}}, answer) as legacy:
        assert text(await legacy.call("plan")) == "Bob: Swim"
    assert sorted(asked) == ["elicitation/create", "sampling/createMessage"]


async def test_a_resource_read_may_ask_too() -> None:
    server = Server("res")

    @server.resource("secret://{name}")
    async def secret(name: str, ctx: Context) -> str:
        ok = await ctx.elicit(f"Reveal {name}?", {"type": "object", "properties": {}})
        return "s3cr3t" if ok.action == "accept" else "hidden"

    params = {"uri": "secret://x"}
    async with raw(server) as peer:
        first = await peer.request("resources/read", params, EVERYTHING)
        assert first["resultType"] == "input_required" and "ttlMs" not in first
        done = await retry(
            peer, first, {"elicit-1": {"action": "accept"}}, params, "resources/read"
        )
        assert done["contents"][0]["text"] == "s3cr3t"
        assert done["ttlMs"] == 0


async def test_malformed_input_responses_are_32602() -> None:
    server, _ = survey_server()
    async with raw(server) as peer:
        for bad in ([1], "x", {"elicit-1": "yes"}):
            error = await peer.error(
                "tools/call", {**call("greet", style="w"), "inputResponses": bad}, EVERYTHING
            )
            assert error["code"] == -32602


async def test_asking_outside_the_three_methods_is_a_clear_error(
    caplog: pytest.LogCaptureFixture,
) -> None:
    server = Server("completion")

    @server.prompt()
    def review(language: str) -> str:
        return language

    @server.completion("ref/prompt", "review")
    async def complete(argument: str, value: str, context: dict[str, str], ctx: Context) -> Any:
        await ctx.elicit("?", {"type": "object", "properties": {}})
        return []

    params = {
        "ref": {"type": "ref/prompt", "name": "review"},
        "argument": {"name": "language", "value": "p"},
    }
    async with raw(server) as peer:
        error = await peer.error("completion/complete", params, EVERYTHING)
        assert error["code"] == -32603
        assert (
            "cannot ask the client during completion/complete at 2026-07-28" in (error["message"])
        )
    assert "cannot ask the client" in caplog.text


async def test_input_required_passes_through_broad_except_in_handlers() -> None:
    server = Server("broad")

    @server.tool()
    async def careless(ctx: Context) -> str:
        try:
            who = await ctx.elicit("Name?", Name)
        except Exception:  # must not swallow the round
            return "swallowed"
        return who.data.name if who.data else "none"

    async with raw(server) as peer:
        first = await peer.request("tools/call", call("careless"), EVERYTHING)
        assert first["resultType"] == "input_required"


async def test_inline_sync_tools_are_untouched_by_rounds() -> None:
    server = Server("sync")

    @server.tool()
    def plain(n: int) -> int:
        return n + 1

    async with raw(server) as peer:
        result = await peer.request("tools/call", call("plain", n=1), EVERYTHING)
        assert result["structuredContent"] == {"result": 2}
        assert result["resultType"] == "complete"


def named_server() -> Server:
    """Asks under names the handler chose, with one unnamed ask in between."""
    server = Server("named")

    @server.tool()
    async def trip(ctx: Context) -> str:
        who = await ctx.elicit("Your name?", Name, key="user_name")
        roots = await ctx.list_roots()  # unnamed: still "roots-2", the count is not shifted
        idea = await ctx.sample("Where to?", key="destination")
        return f"{who.data.name} from {roots[0].uri} to {idea.content.text}"

    return server


async def test_asks_can_name_their_input_requests() -> None:
    params = call("trip")
    ada = {"action": "accept", "content": {"name": "Ada"}}
    async with raw(named_server()) as peer:
        first = await peer.request("tools/call", params, EVERYTHING)
        assert list(first["inputRequests"]) == ["user_name"]
        second = await retry(peer, first, {"user_name": ada}, params)
        assert second["inputRequests"] == {"roots-2": {"method": "roots/list"}}
        third = await retry(peer, second, {"roots-2": {"roots": [{"uri": "file:///h"}]}}, params)
        assert list(third["inputRequests"]) == ["destination"]
        assert third["inputRequests"]["destination"]["method"] == "sampling/createMessage"
        done = await retry(peer, third, {"destination": sampled("Rome")}, params)
        assert text(done) == "Ada from file:///h to Rome"

        # Answers under the names work on a first call too (no requestState yet).
        answers = {
            "user_name": ada,
            "roots-2": {"roots": [{"uri": "file:///w"}]},
            "destination": sampled("Oslo"),
        }
        direct = await peer.request("tools/call", {**params, "inputResponses": answers}, EVERYTHING)
        assert text(direct) == "Ada from file:///w to Oslo"


async def test_named_asks_are_plain_requests_in_the_handshake_era() -> None:
    asked: list[str] = []

    def answer(session: Session, request: RequestReceived) -> dict[str, Any]:
        asked.append(request.method)
        if request.method == "elicitation/create":
            return {"action": "accept", "content": {"name": "Bob"}}
        if request.method == "roots/list":
            return {"roots": [{"uri": "file:///b"}]}
        return sampled("Lima")

    capabilities = {"elicitation": {}, "sampling": {}, "roots": {}}
    async with connect(named_server(), capabilities, answer) as peer:
        assert text(await peer.call("trip")) == "Bob from file:///b to Lima"
    assert asked == ["elicitation/create", "roots/list", "sampling/createMessage"]


async def test_one_key_for_two_asks_is_an_error() -> None:
    server = Server("twice")

    @server.tool()
    async def twice(ctx: Context) -> str:
        await ctx.gather_input(
            ctx.elicit_request("A?", Name, key="same"), ctx.sample_request("B?", key="same")
        )
        return "unreachable"

    async with raw(server) as peer:
        result = await peer.request("tools/call", call("twice"), EVERYTHING)
        assert result["isError"] is True
        assert "'same' is already used" in text(result)
