"""MCP Apps in the Host, over real stdio servers (tests/host/apps_server.py): app-only tools
never reach a model (the host's list, a public-name call, the agent's request to its
provider), a tool's view loads with its declared sandbox, and the view bridge answers the
view as the 2026-01-26 text says, refusing what it must (each refusal is checked by the
server's own count of the calls it ran). A FastMCP 4.1.6 server's app (declared with its own
helpers, tests/host/fastmcp_apps_server.py) goes through the same Host and bridge."""

from __future__ import annotations

import asyncio
import json
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import pytest

from mcpkit.host import Host
from mcpkit.host.apps import (
    INTERNAL_ERROR,
    INVALID_PARAMS,
    INVALID_REQUEST,
    METHOD_NOT_FOUND,
    REFUSED,
    ViewBridge,
    allow_attribute,
    content_security_policy,
    load_view,
)
from mcpkit.host.consent import Approval, ApprovalRequest
from mcpkit.host.providers import ScriptedProvider

SERVER = str(Path(__file__).with_name("apps_server.py"))
FASTMCP_APPS = Path(__file__).with_name("fastmcp_apps_server.py")


def config(*names: str) -> dict[str, Any]:
    return {
        "mcpServers": {name: {"command": sys.executable, "args": [SERVER, name]} for name in names}
    }


class Answers:
    """An approval callback that always gives `allow`, keeping what it was asked."""

    def __init__(self, allow: bool = True) -> None:
        self.allow = allow
        self.asked: list[ApprovalRequest] = []

    def __call__(self, request: ApprovalRequest) -> Approval:
        self.asked.append(request)
        return Approval(self.allow)


async def counts(host: Host, server: str) -> dict[str, int]:
    """What the server's tools ran, as it counts it."""
    read = await host.servers.client(server).read_resource(f"count://{server}")
    return json.loads(read.to_wire()["contents"][0]["text"])  # type: ignore[no-any-return]


class Posted:
    """The view's side of the bridge: what the host posted to it (`arrived` is set on each)."""

    def __init__(self) -> None:
        self.messages: list[dict[str, Any]] = []
        self.arrived = asyncio.Event()

    def __call__(self, message: dict[str, Any]) -> None:
        self.messages.append(message)
        self.arrived.set()

    def methods(self) -> list[str]:
        return [m.get("method", "") for m in self.messages]


def request(method: str, params: Any = None, request_id: Any = 1) -> dict[str, Any]:
    message: dict[str, Any] = {"jsonrpc": "2.0", "id": request_id, "method": method}
    if params is not None:
        message["params"] = params
    return message


def notification(method: str, params: Any = None) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "method": method, "params": params or {}}


async def initialize(bridge: ViewBridge, modes: list[str] | None = None) -> dict[str, Any]:
    capabilities = {} if modes is None else {"availableDisplayModes": modes}
    params = {
        "appCapabilities": capabilities,
        "appInfo": {"name": "test view", "version": "1"},
        "protocolVersion": "2026-01-26",
    }
    answer = await bridge.receive(request("ui/initialize", params, "init"))
    assert answer is not None and "result" in answer, answer
    await bridge.receive(notification("ui/notifications/initialized"))
    return answer["result"]  # type: ignore[no-any-return]


@asynccontextmanager
async def hosted(*names: str, allow: bool = True) -> AsyncIterator[tuple[Host, Answers]]:
    answers = Answers(allow)
    async with Host(config(*names), approve=answers) as host:
        yield host, answers


async def call(bridge: ViewBridge, name: str, request_id: int = 7) -> dict[str, Any]:
    params = {"name": name, "arguments": {}}
    answer = await bridge.receive(request("tools/call", params, request_id))
    assert answer is not None and answer["id"] == request_id
    return answer


# -- the model's tools ----------------------------------------------------------------------


async def test_app_only_tools_are_not_in_the_hosts_list_nor_callable_by_name() -> None:
    async with hosted("alpha") as (host, _):
        names = {tool.name for tool in await host.tools.list()}
        assert names == {"alpha__show", "alpha__model_only", "alpha__plain", "alpha__alpha_only"}
        assert "alpha__crash" not in names
        with pytest.raises(KeyError, match="alpha__app_only"):
            await host.tools.call_tool("alpha__app_only")
        assert "app_only" not in await counts(host, "alpha")
        # ... but the server still lists it, for its views.
        assert await host.tools.server_tool("alpha", "app_only") is not None


async def test_the_agent_offers_its_model_no_app_only_tool() -> None:
    hallucinated = {
        "content": [{"type": "tool_use", "id": "u1", "name": "alpha__app_only", "input": {}}]
    }
    model = ScriptedProvider([hallucinated, "done"])
    async with Host(config("alpha"), provider=model, approve=Answers()) as host:
        assert await host.agent().send("use every tool") == "done"
        assert "app_only" not in await counts(host, "alpha")
    first, second = model.requests
    offered = {tool["name"] for tool in first.tools}
    assert "alpha__model_only" in offered and "alpha__show" in offered
    assert "alpha__app_only" not in offered
    (result,) = [b for b in second.messages[-1]["content"] if b["type"] == "tool_result"]
    assert result["isError"]


# -- the view -------------------------------------------------------------------------------


async def test_a_tools_view_loads_with_its_declared_sandbox() -> None:
    async with hosted("alpha") as (host, _):
        view = await load_view(host, "alpha", "show")
        assert view is not None
        assert view.uri == "ui://alpha/view" and "view of alpha" in view.html
        assert view.csp == {"connectDomains": ["https://api.example.com"]}
        assert await load_view(host, "alpha", "plain") is None  # no view: text only
        with pytest.raises(KeyError):
            await load_view(host, "alpha", "beta_only")
    policy = content_security_policy(view.csp)
    assert "connect-src 'self' https://api.example.com" in policy
    assert "object-src 'none'" in policy and "frame-src 'none'" in policy


def test_the_default_policy_is_the_specs_restrictive_one() -> None:
    policy = content_security_policy(None).split("; ")
    for directive in (
        "default-src 'none'",
        "script-src 'self' 'unsafe-inline'",
        "style-src 'self' 'unsafe-inline'",
        "img-src 'self' data:",
        "media-src 'self' data:",
        "connect-src 'none'",
        "object-src 'none'",
        "base-uri 'self'",
    ):
        assert directive in policy


def test_a_declared_domain_cannot_add_sources_or_directives() -> None:
    hostile = {
        "connectDomains": ["https://ok.example", "https://a.example; script-src *", "*'"],
        "frameDomains": ["https://x.example https://evil.example", 42],
    }
    policy = content_security_policy(hostile)
    assert "connect-src 'self' https://ok.example;" in policy
    assert "evil" not in policy and "script-src *" not in policy and "frame-src 'none'" in policy


def test_the_allow_attribute_names_only_declared_known_features() -> None:
    declared = {"camera": {}, "clipboardWrite": {}, "usb": {}, "microphone": True}
    assert allow_attribute(declared) == "camera; clipboard-write"
    assert allow_attribute(None) == ""


# -- the bridge -----------------------------------------------------------------------------


async def test_initialize_gives_capabilities_and_context_and_nothing_goes_out_before() -> None:
    async with hosted("alpha") as (host, _):
        tool = await host.tools.server_tool("alpha", "show")
        posted = Posted()
        bridge = ViewBridge(
            host, "alpha", posted, tool=tool, tool_call_id=3, context={"theme": "dark"}
        )
        bridge.tool_input({"city": "Oslo"})
        bridge.update_context({"locale": "nb-NO"})
        answer = await bridge.receive(request("ui/initialize", {"appCapabilities": {}}, 1))
        assert answer is not None
        result = answer["result"]
        assert result["protocolVersion"] == "2026-01-26"
        assert set(result["hostCapabilities"]) == {"serverTools", "serverResources", "logging"}
        context = result["hostContext"]
        assert context["toolInfo"] == {"id": 3, "tool": tool.to_wire()}  # type: ignore[union-attr]
        assert (context["theme"], context["locale"], context["displayMode"]) == (
            "dark",
            "nb-NO",
            "inline",
        )
        bridge.tool_result({"content": [{"type": "text", "text": "sunny"}]})
        bridge.update_context({"theme": "light"})
        assert posted.messages == []  # not initialized yet: nothing may be sent
        await bridge.receive(notification("ui/notifications/initialized"))
        assert posted.methods() == [
            "ui/notifications/tool-input",
            "ui/notifications/tool-result",
            "ui/notifications/host-context-changed",
        ]
        assert posted.messages[0]["params"] == {"arguments": {"city": "Oslo"}}
        assert posted.messages[2]["params"] == {"theme": "light"}
        bridge.tool_cancelled("user")  # ready now: straight out
        assert posted.methods()[-1] == "ui/notifications/tool-cancelled"


async def test_a_view_calls_an_app_tool_of_its_server_once_consent_allows() -> None:
    async with hosted("alpha") as (host, answers):
        bridge = ViewBridge(host, "alpha", Posted())
        await initialize(bridge)
        answer = await call(bridge, "app_only")
        assert answer["result"]["content"][0]["text"] == "alpha: app_only ran"
        answer = await call(bridge, "show")  # default visibility includes "app"
        assert answer["result"]["content"][0]["text"] == "alpha: sunny in Paris"
        assert [(r.kind, r.server, r.details.get("tool")) for r in answers.asked] == [
            ("tool", "alpha", "app_only"),
            ("tool", "alpha", "show"),
        ]
        assert await counts(host, "alpha") == {"app_only": 1, "show": 1}


async def test_a_request_before_ui_initialize_is_refused() -> None:
    async with hosted("alpha") as (host, answers):
        bridge = ViewBridge(host, "alpha", Posted())
        answer = await call(bridge, "app_only")
        assert answer["error"]["code"] == INVALID_REQUEST
        answer = await bridge.receive(request("resources/read", {"uri": "count://alpha"}, 2))
        assert answer is not None and answer["error"]["code"] == INVALID_REQUEST
        assert answers.asked == [] and await counts(host, "alpha") == {}


async def test_a_model_only_tool_is_refused_to_a_view() -> None:
    async with hosted("alpha") as (host, answers):
        bridge = ViewBridge(host, "alpha", Posted())
        await initialize(bridge)
        answer = await call(bridge, "model_only")
        assert answer["error"]["code"] == REFUSED
        assert "visibility" in answer["error"]["message"]
        assert answers.asked == []  # refused before the user is bothered
        assert await counts(host, "alpha") == {}


async def test_a_view_cannot_reach_another_servers_tools() -> None:
    async with hosted("alpha", "beta") as (host, answers):
        bridge = ViewBridge(host, "alpha", Posted())
        await initialize(bridge)
        for name in ("beta_only", "beta__beta_only", "beta__app_only"):
            answer = await call(bridge, name)
            assert answer["error"]["code"] == INVALID_PARAMS, name
            assert answer["error"]["message"] == f"Unknown tool: {name}"
        assert answers.asked == []
        assert await counts(host, "beta") == {} and await counts(host, "alpha") == {}


async def test_a_call_the_user_declines_is_refused() -> None:
    async with hosted("alpha", allow=False) as (host, answers):
        bridge = ViewBridge(host, "alpha", Posted())
        await initialize(bridge)
        answer = await call(bridge, "app_only")
        assert answer["error"]["code"] == REFUSED
        assert len(answers.asked) == 1
        assert await counts(host, "alpha") == {}


async def test_a_server_dying_mid_call_is_an_error_without_its_stderr() -> None:
    async with hosted("alpha") as (host, _):
        bridge = ViewBridge(host, "alpha", Posted())
        await initialize(bridge)
        answer = await call(bridge, "crash")
        assert answer["error"]["code"] == INTERNAL_ERROR
        assert "SECRET-STDERR-TOKEN" not in json.dumps(answer)
        assert answer["error"]["message"].startswith("the server could not answer")


async def test_resources_are_read_from_the_views_own_server() -> None:
    async with hosted("alpha", "beta") as (host, _):
        bridge = ViewBridge(host, "alpha", Posted())
        await initialize(bridge)
        answer = await bridge.receive(request("resources/read", {"uri": "ui://alpha/view"}, 4))
        assert answer is not None
        (item,) = answer["result"]["contents"]
        assert item["mimeType"] == "text/html;profile=mcp-app" and "view of alpha" in item["text"]
        answer = await bridge.receive(request("resources/read", {"uri": "ui://beta/view"}, 5))
        assert answer is not None and "error" in answer  # alpha has no such resource


async def test_logging_size_and_display_mode() -> None:
    async with hosted("alpha") as (host, _):
        logged: list[dict[str, Any]] = []
        sizes: list[tuple[float, float]] = []
        bridge = ViewBridge(
            host,
            "alpha",
            Posted(),
            display_modes=["inline", "fullscreen"],
            on_log=logged.append,
            on_size_changed=lambda w, h: sizes.append((w, h)),
        )
        result = await initialize(bridge, modes=["inline", "fullscreen"])
        assert result["hostContext"]["availableDisplayModes"] == ["inline", "fullscreen"]
        await bridge.receive(notification("notifications/message", {"level": "info", "data": "hi"}))
        assert logged == [{"level": "info", "data": "hi"}]
        await bridge.receive(notification("ui/notifications/size-changed", {"width": 300}))
        await bridge.receive(
            notification("ui/notifications/size-changed", {"width": 300, "height": -1})
        )
        assert sizes == [] and bridge.size is None  # malformed sizes are ignored
        size = {"width": 320, "height": 180.5}
        await bridge.receive(notification("ui/notifications/size-changed", size))
        assert sizes == [(320, 180.5)] and bridge.size == (320, 180.5)

        async def mode(wanted: str) -> str:
            answer = await bridge.receive(request("ui/request-display-mode", {"mode": wanted}, 9))
            assert answer is not None
            return answer["result"]["mode"]  # type: ignore[no-any-return]

        assert await mode("pip") == "inline"  # the host cannot show it
        assert await mode("fullscreen") == "fullscreen"
        assert bridge.context["displayMode"] == "fullscreen"


async def test_a_mode_the_view_did_not_declare_is_not_granted() -> None:
    async with hosted("alpha") as (host, _):
        bridge = ViewBridge(host, "alpha", Posted(), display_modes=["inline", "fullscreen"])
        await initialize(bridge, modes=["inline"])
        answer = await bridge.receive(request("ui/request-display-mode", {"mode": "fullscreen"}))
        assert answer is not None and answer["result"] == {"mode": "inline"}


async def test_malformed_and_unknown_messages() -> None:
    async with hosted("alpha") as (host, answers):
        posted = Posted()
        bridge = ViewBridge(host, "alpha", posted)
        assert await bridge.receive("not a message") is None
        assert await bridge.receive({"id": 1, "method": "ping"}) is None  # no jsonrpc
        answer = await bridge.receive(request("ping", None, {"an": "object"}))
        assert answer is not None and answer["id"] is None
        assert answer["error"]["code"] == INVALID_REQUEST
        await initialize(bridge)
        answer = await bridge.receive(request("tools/call", ["app_only"], 2))
        assert answer is not None and answer["error"]["code"] == INVALID_PARAMS
        answer = await bridge.receive(request("tools/call", {"name": "app_only", "arguments": 1}))
        assert answer is not None and answer["error"]["code"] == INVALID_PARAMS
        answer = await bridge.receive(request("tools/list", {}, 3))
        assert answer is not None and answer["error"]["code"] == METHOD_NOT_FOUND
        answer = await bridge.receive(request("ui/initialize", {}, 4))
        assert answer is not None and answer["error"]["code"] == INVALID_REQUEST
        answer = await bridge.receive(request("ping", {}, 5))
        assert answer == {"jsonrpc": "2.0", "id": 5, "result": {}}
        assert posted.messages == [] and answers.asked == []
        assert await counts(host, "alpha") == {}


async def test_teardown_waits_for_the_views_answer() -> None:
    async with hosted("alpha") as (host, _):
        posted = Posted()
        bridge = ViewBridge(host, "alpha", posted)
        assert await bridge.teardown("never shown") is None  # not initialized: nothing sent
        assert posted.messages == []
        await initialize(bridge)
        waiting = asyncio.ensure_future(bridge.teardown("closed"))
        await posted.arrived.wait()
        (sent,) = posted.messages
        assert sent["method"] == "ui/resource-teardown" and sent["params"] == {"reason": "closed"}
        await bridge.receive({"jsonrpc": "2.0", "id": sent["id"], "result": {}})
        assert (await waiting)["result"] == {}


# -- a FastMCP server's app -------------------------------------------------------------------


@pytest.mark.interop
async def test_a_fastmcp_servers_app_through_our_host_and_bridge() -> None:
    from tests.peers import fastmcp_python

    entry = {"command": str(fastmcp_python()), "args": [str(FASTMCP_APPS)]}
    answers = Answers()
    async with Host({"mcpServers": {"fm": entry}}, approve=answers) as host:
        names = {tool.name for tool in await host.tools.list()}
        assert names == {"fm__show", "fm__secret"}  # `nudge` is for its views only
        view = await load_view(host, "fm", "show")
        assert view is not None and "fastmcp board" in view.html
        assert view.csp == {"connectDomains": ["https://api.fm.example"]}
        assert view.prefers_border is True
        bridge = ViewBridge(host, "fm", Posted(), tool=await host.tools.server_tool("fm", "show"))
        result = await initialize(bridge)
        assert result["hostContext"]["toolInfo"]["tool"]["name"] == "show"
        answer = await call(bridge, "nudge")
        assert answer["result"]["content"][0]["text"] == "fm: nudged"
        answer = await call(bridge, "secret")
        assert answer["error"]["code"] == REFUSED
        assert [r.details.get("tool") for r in answers.asked] == ["nudge"]
        assert await counts(host, "fm") == {"nudge": 1}


# -- mcpkit chat ----------------------------------------------------------------------------


async def test_mcpkit_chat_offers_its_model_no_app_only_tool(tmp_path: Path) -> None:
    from tests.host.fake_llm import fake_llm, openai_completion
    from tests.host.test_chat import run_piped, write_config

    config = write_config(
        tmp_path, {"alpha": {"command": sys.executable, "args": [SERVER, "alpha"]}}
    )
    async with fake_llm() as fake:
        fake.script(openai_completion("hello back"))
        argv = [
            sys.executable, "-m", "mcpkit", "chat", "--config", str(config),
            "--provider", "openai", "--base-url", f"{fake.url}/v1", "--model", "gpt-test",
            "--consent-file", str(tmp_path / "consent.json"),
        ]  # fmt: skip
        code, out, err = await run_piped(argv, "hello\n/tools\n/quit\n", api_key="sk-test")
        assert code == 0, err
        assert "model> hello back" in out
        (first,) = (seen.body for seen in fake.requests)
    offered = {tool["function"]["name"] for tool in first["tools"]}
    assert offered == {"alpha__show", "alpha__model_only", "alpha__plain", "alpha__alpha_only"}
    assert "alpha__model_only" in out and "app_only" not in out


# -- the example ----------------------------------------------------------------------------


async def test_the_chart_example_through_the_host_and_bridge() -> None:
    example = Path(__file__).resolve().parents[2] / "examples" / "apps" / "chart_server.py"
    entry = {"command": sys.executable, "args": [str(example)]}
    async with Host({"mcpServers": {"chart": entry}}, approve=Answers()) as host:
        assert {tool.name for tool in await host.tools.list()} == {"chart__show_chart"}
        view = await load_view(host, "chart", "show_chart")
        assert view is not None and view.prefers_border is True and view.csp == {}
        for method in ("ui/initialize", "ui/notifications/initialized", "tools/call"):
            assert f'"{method}"' in view.html  # what its script sends, as the spec names it
        shown = await host.tools.call_tool("chart__show_chart")
        assert shown.structured_content == {"points": [3.0, 5.0, 2.0, 6.0]}
        bridge = ViewBridge(host, "chart", Posted())
        await initialize(bridge, modes=["inline"])
        answer = await bridge.receive(
            request("tools/call", {"name": "add_point", "arguments": {"value": 4}}, 2)
        )
        assert answer is not None
        assert answer["result"]["structuredContent"] == {"points": [3.0, 5.0, 2.0, 6.0, 4.0]}


# -- one client, no Host (a single-server front end such as the inspector) ----------------


async def test_a_bridge_over_one_client_keeps_the_same_rules() -> None:
    from mcpkit import Client
    from mcpkit.host.apps import ClientServer
    from mcpkit.host.consent import ConsentPolicy

    async with Client([sys.executable, SERVER, "solo"]) as client:
        server = ClientServer(client, "solo")  # no policy: the application decided
        view = await load_view(None, server, "show")
        assert view is not None and view.server == "solo" and "view of solo" in view.html
        bridge = ViewBridge(None, server, Posted())
        await initialize(bridge)
        assert (await call(bridge, "app_only"))["result"]["content"][0][
            "text"
        ] == "solo: app_only ran"
        assert (await call(bridge, "model_only"))["error"]["code"] == REFUSED
        assert (await call(bridge, "nope"))["error"]["code"] == INVALID_PARAMS

        declined = Answers(allow=False)
        guarded = ViewBridge(None, ClientServer(client, "solo", ConsentPolicy(declined)), Posted())
        await initialize(guarded)
        assert (await call(guarded, "app_only"))["error"]["code"] == REFUSED
        assert len(declined.asked) == 1
        read = await client.read_resource("count://solo")
    assert json.loads(read.to_wire()["contents"][0]["text"]) == {"app_only": 1}
    with pytest.raises(TypeError, match="give its Host"):
        ViewBridge(None, "solo", Posted())
    # The client is closed now: the view's call is an error answer, not an exception.
    closed = await call(bridge, "app_only")
    assert closed["error"] == {"code": -32603, "message": "the server is not connected"}


async def test_links_messages_and_model_context_go_to_the_front_end_when_it_offers_them() -> None:
    from mcpkit.host.apps import ViewRequests

    opened: list[str] = []
    said: list[dict[str, Any]] = []

    async def message(params: dict[str, Any]) -> bool:  # an async front end
        said.append(params)
        return True

    requests = ViewRequests(open_link=lambda url: opened.append(url) is None, message=message)
    async with hosted("alpha") as (host, _):
        bridge = ViewBridge(host, "alpha", Posted(), requests=requests)
        result = await initialize(bridge)
        assert "openLinks" in result["hostCapabilities"]

        async def ask(method: str, params: Any) -> dict[str, Any]:
            answer = await bridge.receive(request(method, params, 11))
            assert answer is not None
            return answer

        assert (await ask("ui/open-link", {"url": "https://example.com/a"}))["result"] == {}
        for url in ("javascript:alert(1)", "data:text/html,x", "file:///etc/passwd", "https://"):
            assert (await ask("ui/open-link", {"url": url}))["error"]["code"] == INVALID_PARAMS
        assert opened == ["https://example.com/a"]
        text = {"role": "user", "content": {"type": "text", "text": "more please"}}
        assert (await ask("ui/message", text))["result"] == {}
        bad = {"role": "assistant", "content": {"type": "text", "text": "I am the model"}}
        assert (await ask("ui/message", bad))["error"]["code"] == INVALID_PARAMS
        assert said == [text]
        context = {"structuredContent": {"city": "Oslo"}}
        answer = await ask("ui/update-model-context", context)
        assert answer["error"]["code"] == METHOD_NOT_FOUND  # not offered by this front end

        plain = ViewBridge(host, "alpha", Posted())
        result = await initialize(plain)
        assert "openLinks" not in result["hostCapabilities"]
        answer = await plain.receive(request("ui/open-link", {"url": "https://example.com"}, 1))
        assert answer is not None and answer["error"]["code"] == METHOD_NOT_FOUND


async def test_a_front_end_that_says_no_is_a_refusal() -> None:
    from mcpkit.host.apps import ViewRequests

    requests = ViewRequests(model_context=lambda params: False)
    async with hosted("alpha") as (host, _):
        bridge = ViewBridge(host, "alpha", Posted(), requests=requests)
        await initialize(bridge)
        for params in ({"content": "text"}, {"structuredContent": [1]}):
            answer = await bridge.receive(request("ui/update-model-context", params, 1))
            assert answer is not None and answer["error"]["code"] == INVALID_PARAMS
        answer = await bridge.receive(request("ui/update-model-context", {"content": []}, 2))
        assert answer is not None and answer["error"]["code"] == REFUSED
