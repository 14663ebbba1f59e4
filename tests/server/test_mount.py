"""`server.mount(other, prefix=...)` and `server.import_server(...)`: one server made of
others, through a real client (in memory, both eras)."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator
from typing import Any

import pytest

from mcpkit import Context, Server
from mcpkit.errors import ProtocolError
from mcpkit.testing import call, connect, texts, tools_by_name


def weather() -> Server:
    @contextlib.asynccontextmanager
    async def lifespan(server: Server) -> AsyncIterator[dict[str, str]]:
        yield {"unit": "celsius"}

    server = Server("weather", lifespan=lifespan)

    @server.tool()
    def forecast(city: str, ctx: Context) -> str:
        """Tomorrow's weather."""
        return f"sunny in {city}, {ctx.server.lifespan_state['unit']}"  # type: ignore[attr-defined]

    @server.tool()
    async def slow(ctx: Context) -> str:
        """Progress, a log message and a question for the client."""
        await ctx.report_progress(1, 2)
        await ctx.info("half way")
        answer = await ctx.sample("more?", max_tokens=5)
        return f"sampled {answer.content.text}"  # type: ignore[union-attr]

    @server.prompt()
    def report(city: str) -> str:
        return f"Report on {city}"

    @server.resource("data://note")
    def note() -> str:
        return "a note"

    @server.resource("cities://{name}")
    def city(name: str) -> str:
        return f"city {name}"

    @server.completion("ref/prompt", "report", "city")
    def cities(argument: str, value: str, context: dict[str, str]) -> list[str]:
        return [c for c in ("Paris", "Perth", "Oslo") if c.startswith(value)]

    return server


def parent() -> tuple[Server, Server]:
    main = Server("main")

    @main.tool()
    def hello() -> str:
        return "hello"

    child = weather()
    main.mount(child, prefix="weather")
    return main, child


@pytest.mark.parametrize("era", ["handshake", "2026-07-28"])
async def test_a_mounted_server_s_items_appear_under_the_prefix_and_work(era: str) -> None:
    main, _ = parent()
    async with connect(main, era=era) as client:
        tools = await tools_by_name(client)
        assert set(tools) == {"hello", "weather_forecast", "weather_slow"}
        assert tools["weather_forecast"]["description"] == "Tomorrow's weather."
        result = await call(client, "weather_forecast", city="Oslo")
        assert texts(result) == ["sunny in Oslo, celsius"]  # the mounted server's lifespan
        prompts = await client.list_prompts()
        assert [p.name for p in prompts.prompts] == ["weather_report"]
        prompt = await client.get_prompt("weather_report", {"city": "Oslo"})
        assert texts(prompt) == ["Report on Oslo"]
        resources = await client.list_resources()
        assert [r.uri for r in resources.resources] == ["data://weather/note"]
        templates = await client.list_resource_templates()
        assert [t.uri_template for t in templates.resource_templates] == ["cities://weather/{name}"]
        read = await client.read_resource("data://weather/note")
        assert read.contents[0].uri == "data://weather/note"  # round-trips
        read = await client.read_resource("cities://weather/Oslo")
        assert texts(read) == ["city Oslo"] and read.contents[0].uri == "cities://weather/Oslo"
        with pytest.raises(ProtocolError):
            await client.read_resource("data://note")  # the unprefixed URI is not ours
        completed = await client.complete("city", "P", prompt="weather_report")
        assert completed.completion.values == ["Paris", "Perth"]


async def test_a_mounted_handler_talks_to_the_client_that_called() -> None:
    main, _ = parent()
    progress: list[float] = []
    logs: list[Any] = []

    async def sampling(params: Any) -> dict[str, Any]:
        return {"role": "assistant", "content": {"type": "text", "text": "yes"}, "model": "m"}

    async def on_log(params: Any) -> None:
        logs.append(params.data)

    async def on_progress(value: float, total: float | None, message: str | None) -> None:
        progress.append(value)

    async with connect(main, sampling=sampling, on_log=on_log) as client:
        await client.set_logging_level("info")
        result = await client.call_tool("weather_slow", {}, on_progress=on_progress)
        assert texts(result) == ["sampled yes"]
    assert progress == [1] and logs == ["half way"]


async def test_mount_is_live_and_list_changed_reaches_the_parent_s_clients() -> None:
    main, child = parent()
    changed = asyncio.Event()

    async def on_change(kind: str) -> None:
        changed.set()

    async with connect(main, on_list_changed=on_change) as client:
        child.add_tool(lambda: "later", name="late")
        await asyncio.wait_for(changed.wait(), 5)
        assert "weather_late" in await tools_by_name(client)
        child.remove_tool("late")
        assert "weather_late" not in await tools_by_name(client)


async def test_a_mounted_server_s_resource_update_reaches_the_parent_s_subscribers() -> None:
    main, child = parent()
    updates: asyncio.Queue[str] = asyncio.Queue()

    async def on_updated(uri: str) -> None:
        updates.put_nowait(uri)

    async with connect(main, on_resource_updated=on_updated) as client:
        await client.subscribe_resource("cities://weather/Oslo")
        assert child.resources.notify_updated("cities://{name}") == 0  # none of its own
        assert await asyncio.wait_for(updates.get(), 5) == "cities://weather/Oslo"


async def test_import_server_is_a_one_time_copy() -> None:
    main = Server("main")
    child = weather()
    main.import_server(child, prefix="w")
    child.add_tool(lambda: "later", name="late")
    async with connect(main) as client:
        tools = await tools_by_name(client)
    assert "w_forecast" in tools and "w_late" not in tools


def test_names_taken_in_the_parent_are_refused_at_mount() -> None:
    main = Server("main")

    @main.tool()
    def weather_forecast() -> str:
        return "mine"

    with pytest.raises(ValueError, match="already registered"):
        main.mount(weather(), prefix="weather")
    with pytest.raises(ValueError, match="mount prefix"):
        Server("other").mount(weather(), prefix="a/b")


async def test_the_mounted_server_s_scopes_still_apply() -> None:
    child = Server("guarded")

    @child.tool(scopes=["admin"])
    def wipe() -> str:
        return "wiped"

    main = Server("main")
    main.mount(child, prefix="g")
    assert main.required_scopes("tools/call", {"name": "g_wipe"}) == frozenset({"admin"})


async def test_the_mounted_server_s_logger_reaches_the_parent_s_clients() -> None:
    main, child = parent()

    @child.tool()
    def chatty() -> str:
        child.logger.warning("from the mounted server's logger")
        return "ok"

    logs: list[Any] = []

    async def on_log(params: Any) -> None:
        logs.append(params.data)

    async with connect(main, on_log=on_log) as client:
        await client.set_logging_level("warning")
        await call(client, "weather_chatty")
        await client.ping()  # the log notification left before the answer; settle
    assert logs == ["from the mounted server's logger"]


@pytest.mark.parametrize("era", ["handshake", "2026-07-28"])
async def test_a_mounted_handler_asks_the_client_in_either_era(era: str) -> None:
    """Sampling from a mounted handler: a server-to-client request (handshake era) or an
    input_required round (2026-07-28), answered by the client that called."""
    main, _ = parent()

    async def sampling(params: Any) -> dict[str, Any]:
        return {"role": "assistant", "content": {"type": "text", "text": era}, "model": "m"}

    async with connect(main, era=era, sampling=sampling) as client:
        result = await client.call_tool("weather_slow", {})
    assert texts(result) == [f"sampled {era}"]
