"""The middleware chain (issue 28): every hook kind, order, answering early, changing params,
errors, both eras, mounted servers, the proxy; through a real client in this process."""

from __future__ import annotations

import asyncio
import sys
from typing import Any

import pytest

from mcpkit import Context, Server
from mcpkit.errors import ProtocolError
from mcpkit.gateway import proxy
from mcpkit.server.middleware import CallNext, Middleware, MiddlewareContext
from mcpkit.testing import call, connect, texts
from mcpkit.types.eras import Era

ERAS = ["handshake", "2026-07-28"]


class Recorder(Middleware):
    """Records every hook it runs, as (its label, hook, method)."""

    def __init__(self, label: str, seen: list[tuple[str, str, str]]) -> None:
        self.label = label
        self.seen = seen

    async def _note(self, hook: str, mctx: MiddlewareContext, call_next: CallNext) -> Any:
        self.seen.append((self.label, hook, mctx.method))
        return await call_next(mctx)

    async def on_message(self, mctx: MiddlewareContext, call_next: CallNext) -> Any:
        return await self._note("message", mctx, call_next)

    async def on_request(self, mctx: MiddlewareContext, call_next: CallNext) -> Any:
        return await self._note("request", mctx, call_next)

    async def on_notification(self, mctx: MiddlewareContext, call_next: CallNext) -> Any:
        return await self._note("notification", mctx, call_next)

    async def on_call_tool(self, mctx: MiddlewareContext, call_next: CallNext) -> Any:
        return await self._note("call_tool", mctx, call_next)

    async def on_read_resource(self, mctx: MiddlewareContext, call_next: CallNext) -> Any:
        return await self._note("read_resource", mctx, call_next)

    async def on_get_prompt(self, mctx: MiddlewareContext, call_next: CallNext) -> Any:
        return await self._note("get_prompt", mctx, call_next)

    async def on_list_tools(self, mctx: MiddlewareContext, call_next: CallNext) -> Any:
        return await self._note("list_tools", mctx, call_next)

    async def on_list_resources(self, mctx: MiddlewareContext, call_next: CallNext) -> Any:
        return await self._note("list_resources", mctx, call_next)

    async def on_list_resource_templates(self, mctx: MiddlewareContext, call_next: CallNext) -> Any:
        return await self._note("list_resource_templates", mctx, call_next)

    async def on_list_prompts(self, mctx: MiddlewareContext, call_next: CallNext) -> Any:
        return await self._note("list_prompts", mctx, call_next)


def app(**options: Any) -> Server:
    server = Server("app", **options)

    @server.tool()
    def echo(text: str) -> str:
        return text

    @server.tool()
    def boom() -> str:
        raise RuntimeError("secret detail: /etc/passwd")

    @server.resource("data://note")
    def note() -> str:
        return "a note"

    @server.resource("notes://{name}")
    def named(name: str) -> str:
        return f"note {name}"

    @server.prompt()
    def greet(name: str) -> str:
        return f"Hello {name}"

    return server


@pytest.mark.parametrize("era", ERAS)
async def test_every_typed_hook_runs_for_its_method_after_message_and_request(era: str) -> None:
    seen: list[tuple[str, str, str]] = []
    server = app(middleware=[Recorder("a", seen)])
    async with connect(server, era=era) as client:
        seen.clear()  # the handshake's requests are not what this test is about
        await client.list_tools()
        await call(client, "echo", text="x")
        await client.list_resources()
        await client.list_resource_templates()
        await client.read_resource("data://note")
        await client.list_prompts()
        await client.get_prompt("greet", {"name": "Ann"})
    typed = [(hook, method) for _, hook, method in seen if hook not in ("message", "request")]
    assert typed == [
        ("list_tools", "tools/list"),
        ("call_tool", "tools/call"),
        ("list_resources", "resources/list"),
        ("list_resource_templates", "resources/templates/list"),
        ("read_resource", "resources/read"),
        ("list_prompts", "prompts/list"),
        ("get_prompt", "prompts/get"),
    ]
    calls = [hook for _, hook, method in seen if method == "tools/call"]
    assert calls == ["message", "request", "call_tool"]


async def test_the_first_added_is_outermost_and_add_middleware_appends() -> None:
    seen: list[tuple[str, str, str]] = []
    server = app(middleware=[Recorder("first", seen)])
    server.add_middleware(Recorder("second", seen))
    async with connect(server) as client:
        seen.clear()
        await call(client, "echo", text="x")
    assert [(label, hook) for label, hook, _ in seen] == [
        ("first", "message"),
        ("first", "request"),
        ("first", "call_tool"),
        ("second", "message"),
        ("second", "request"),
        ("second", "call_tool"),
    ]
    assert [type(m) for m in server.middleware] == [Recorder, Recorder]


class Shout(Middleware):
    """Changes the params on the way in and the result on the way out."""

    async def on_call_tool(self, mctx: MiddlewareContext, call_next: CallNext) -> Any:
        mctx.params = {**mctx.params, "arguments": {"text": mctx.params["arguments"]["text"] * 2}}
        result = await call_next(mctx)
        result["content"][0]["text"] = result["content"][0]["text"].upper()
        return result

    async def on_read_resource(self, mctx: MiddlewareContext, call_next: CallNext) -> Any:
        mctx.params["uri"] = "notes://changed"  # changed in place
        return await call_next(mctx)


@pytest.mark.parametrize("era", ERAS)
async def test_a_hook_changes_the_params_and_the_result(era: str) -> None:
    async with connect(app(middleware=[Shout()]), era=era) as client:
        assert texts(await call(client, "echo", text="ab")) == ["ABAB"]
        read = await client.read_resource("data://note")
        assert texts(read.to_wire()) == ["note changed"]


class Gate(Middleware):
    """Answers itself: a result for one tool, a protocol error for another; nothing reaches
    the handler of either."""

    async def on_call_tool(self, mctx: MiddlewareContext, call_next: CallNext) -> Any:
        if mctx.name == "echo":
            return {"content": [{"type": "text", "text": "from the gate"}], "isError": False}
        if mctx.name == "boom":
            raise ProtocolError(-32042, "not today", {"why": "gate"})
        return await call_next(mctx)

    async def on_list_prompts(self, mctx: MiddlewareContext, call_next: CallNext) -> Any:
        return {"prompts": []}


@pytest.mark.parametrize("era", ERAS)
async def test_a_hook_answers_early_with_a_result_or_a_protocol_error(era: str) -> None:
    async with connect(app(middleware=[Gate()]), era=era) as client:
        assert texts(await call(client, "echo", text="x")) == ["from the gate"]
        with pytest.raises(ProtocolError) as raised:
            await call(client, "boom")
        assert (raised.value.code, raised.value.message) == (-32042, "not today")
        assert raised.value.data == {"why": "gate"}
        assert (await client.list_prompts()).prompts == []


class Broken(Middleware):
    async def on_get_prompt(self, mctx: MiddlewareContext, call_next: CallNext) -> Any:
        raise KeyError("middleware bug")


@pytest.mark.parametrize("era", ERAS)
async def test_an_unexpected_exception_in_a_hook_is_an_internal_error(era: str) -> None:
    async with connect(app(middleware=[Broken()]), era=era) as client:
        with pytest.raises(ProtocolError) as raised:
            await client.get_prompt("greet", {"name": "Ann"})
        assert raised.value.code == -32603
        assert "middleware bug" not in raised.value.message
        assert texts(await call(client, "echo", text="still")) == ["still"]


class Facts(Middleware):
    """What a hook can see of the request: its Context, principal, session, era."""

    def __init__(self) -> None:
        self.facts: list[Any] = []

    async def on_call_tool(self, mctx: MiddlewareContext, call_next: CallNext) -> Any:
        ctx = mctx.context
        assert ctx is not None
        self.facts.append(
            (mctx.era, ctx.era, ctx.protocol_version, mctx.principal, mctx.session_id, mctx.kind)
        )
        return await call_next(mctx)


@pytest.mark.parametrize(
    ("era", "expected"), [("handshake", Era.HANDSHAKE), ("2026-07-28", Era.PER_REQUEST)]
)
async def test_a_hook_sees_the_context_and_the_era(era: str, expected: Era) -> None:
    facts = Facts()
    async with connect(app(middleware=[facts]), era=era) as client:
        await call(client, "echo", text="x")
    [(mctx_era, ctx_era, version, principal, session_id, kind)] = facts.facts
    assert mctx_era is expected and ctx_era is expected
    assert version is not None
    assert principal is None and session_id is None  # in memory: no auth, no HTTP session
    assert kind == "request"


async def test_a_notification_from_the_client_goes_through_the_notification_hooks() -> None:
    heard: asyncio.Queue[tuple[str, str]] = asyncio.Queue()

    class Ears(Middleware):
        async def on_notification(self, mctx: MiddlewareContext, call_next: CallNext) -> Any:
            assert mctx.context is None and mctx.kind == "notification"
            heard.put_nowait(("notification", mctx.method))
            return await call_next(mctx)

    server = app(middleware=[Ears()])
    async with connect(server, roots=["file:///a"]) as client:
        await client.set_roots(["file:///b"])
        got = await asyncio.wait_for(heard.get(), 10)
    assert got == ("notification", "notifications/roots/list_changed")


async def test_an_unknown_method_still_answers_method_not_found_with_a_chain() -> None:
    seen: list[tuple[str, str, str]] = []
    async with connect(app(middleware=[Recorder("a", seen)])) as client:
        with pytest.raises(ProtocolError) as raised:
            await client.request("no/such", {})
    assert raised.value.code == -32601


# -- mounted servers -------------------------------------------------------------------------


def mounted(seen: list[tuple[str, str, str]]) -> Server:
    child = Server("child", middleware=[Recorder("child", seen)])

    @child.tool()
    def double(n: int, ctx: Context) -> str:
        return f"{n * 2} by {ctx.server.name}"  # type: ignore[attr-defined]

    @child.prompt()
    def hint() -> str:
        return "a hint"

    @child.resource("data://fact")
    def fact() -> str:
        return "a fact"

    parent = app(middleware=[Recorder("parent", seen)])
    parent.mount(child, prefix="kid")
    return parent


class Triple(Middleware):
    async def on_call_tool(self, mctx: MiddlewareContext, call_next: CallNext) -> Any:
        mctx.params = {**mctx.params, "arguments": {"n": mctx.params["arguments"]["n"] * 3}}
        return await call_next(mctx)


@pytest.mark.parametrize("era", ERAS)
async def test_a_mounted_server_s_middleware_runs_inside_its_parent_s(era: str) -> None:
    seen: list[tuple[str, str, str]] = []
    parent = mounted(seen)
    async with connect(parent, era=era) as client:
        seen.clear()
        assert texts(await call(client, "kid_double", n=2)) == ["4 by child"]
        calls = [(label, hook) for label, hook, _ in seen]
        assert calls == [
            ("parent", "message"),
            ("parent", "request"),
            ("parent", "call_tool"),
            ("child", "message"),
            ("child", "request"),
            ("child", "call_tool"),
        ]
        seen.clear()
        await client.get_prompt("kid_hint")
        await client.read_resource("data://kid/fact")
        await call(client, "echo", text="parent's own")
        child_saw = [(hook, method) for label, hook, method in seen if label == "child"]
        assert ("get_prompt", "prompts/get") in child_saw
        assert ("read_resource", "resources/read") in child_saw
        assert not any(method == "tools/call" for _, method in child_saw)  # echo is the parent's


async def test_a_mounted_server_s_middleware_sees_its_own_names_and_changes_arguments() -> None:
    names: list[tuple[str | None, Any]] = []

    class Names(Middleware):
        async def on_call_tool(self, mctx: MiddlewareContext, call_next: CallNext) -> Any:
            names.append((mctx.name, mctx.server.name))
            return await call_next(mctx)

        async def on_read_resource(self, mctx: MiddlewareContext, call_next: CallNext) -> Any:
            names.append((mctx.params["uri"], mctx.server.name))
            return await call_next(mctx)

    child = Server("child", middleware=[Names(), Triple()])

    @child.tool()
    def double(n: int) -> str:
        return str(n * 2)

    @child.resource("data://fact")
    def fact() -> str:
        return "a fact"

    parent = app()
    parent.mount(child, prefix="kid")
    async with connect(parent) as client:
        assert texts(await call(client, "kid_double", n=1)) == ["6"]
        assert texts((await client.read_resource("data://kid/fact")).to_wire()) == ["a fact"]
    assert names == [("double", "child"), ("data://fact", "child")]


# -- the proxy -------------------------------------------------------------------------------


@pytest.mark.parametrize("era", ERAS)
async def test_a_proxy_s_middleware_wraps_its_forwarded_requests(era: str) -> None:
    seen: list[tuple[str, str, str]] = []
    server = proxy(app())
    server.add_middleware(Recorder("proxy", seen))
    server.add_middleware(Shout())
    async with connect(server, era=era) as client:
        assert texts(await call(client, "echo", text="up")) == ["UPUP"]
        assert (await client.list_prompts()).prompts[0].name == "greet"
    hooks = {(hook, method) for _, hook, method in seen}
    assert {("call_tool", "tools/call"), ("list_prompts", "prompts/list")} <= hooks


@pytest.mark.parametrize("era", ERAS)
async def test_a_proxy_s_middleware_answers_instead_of_the_upstream(era: str) -> None:
    server = proxy(app())
    server.add_middleware(Gate())
    async with connect(server, era=era) as client:
        assert texts(await call(client, "echo", text="x")) == ["from the gate"]
        with pytest.raises(ProtocolError) as raised:
            await call(client, "boom")
        assert raised.value.code == -32042


async def test_a_gateway_s_middleware_wraps_its_routed_requests() -> None:
    """A gateway (its own _handle_request routing to upstream processes) runs its middleware
    around what it routes: the hook sees the namespaced name and changes the arguments."""
    from pathlib import Path

    from mcpkit.gateway import gateway
    from mcpkit.host import load_config

    script = str(Path(__file__).with_name("middleware_server.py"))
    config = {"mcpServers": {"mw": {"command": sys.executable, "args": [script]}}}
    seen: list[tuple[str, str, str]] = []
    server = gateway(load_config(config))
    server.add_middleware(Recorder("gateway", seen))
    server.add_middleware(Shout())
    async with connect(server, timeout=60) as client:
        result = await call(client, "mw__echo", text="up")
    assert texts(result) == ["UPUP", "stamped (handshake, no session)"]
    assert ("gateway", "call_tool", "tools/call") in seen
