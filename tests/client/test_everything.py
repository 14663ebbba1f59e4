"""The typed client against the npm reference server `@modelcontextprotocol/server-everything`
over stdio: every tool it offers, its static and templated resources, every prompt, completion,
subscriptions, logging, and the client features it exercises (sampling, elicitation, roots).

The server's behaviour, read from its source (tests/node/node_modules/@modelcontextprotocol/
server-everything/dist): tools for sampling, elicitation and roots are registered only when the
client declares those capabilities; `toggle-simulated-logging` sends one log message at once
(a random level) and then one every 5 s; `toggle-subscriber-updates` sends `resources/updated`
for each subscribed URI at once and then every 5 s; the subscribe and unsubscribe handlers log
at "info"; `simulate-research-query` needs task augmentation, which mcpkit does not offer.
"""

from __future__ import annotations

import asyncio
import base64
import gzip
import json
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import pytest

from mcpkit import Client
from mcpkit.client import Elicitation, Sampling
from mcpkit.errors import ProtocolError, URLElicitationRequired
from mcpkit.testing import texts
from mcpkit.types import (
    BlobResourceContents,
    CreateMessageRequestParams,
    ElicitRequestFormParams,
    ElicitRequestURLParams,
    EmbeddedResource,
    ImageContent,
    LoggingMessageNotificationParams,
    ResourceLink,
    TextContent,
    TextResourceContents,
)
from tests.peers import node_env, npm_command

BASE_TOOLS = {
    "echo",
    "get-annotated-message",
    "get-env",
    "get-resource-links",
    "get-resource-reference",
    "get-structured-content",
    "get-sum",
    "get-tiny-image",
    "gzip-file-as-resource",
    "toggle-simulated-logging",
    "toggle-subscriber-updates",
    "trigger-long-running-operation",
    "simulate-research-query",
}
FEATURE_TOOLS = {
    "get-roots-list",
    "trigger-elicitation-request",
    "trigger-url-elicitation",
    "trigger-sampling-request",
}
PNG_MAGIC = b"\x89PNG\r\n\x1a\n"


@asynccontextmanager
async def everything(**options: Any) -> AsyncIterator[Client]:
    argv = [*npm_command("mcp-server-everything"), "stdio"]
    async with Client(argv, env=node_env(), **options) as client:
        yield client


async def next_item(queue: asyncio.Queue[Any]) -> Any:
    return await asyncio.wait_for(queue.get(), 5)


async def test_every_plain_tool() -> None:
    async with everything() as client:
        assert client.server_info["name"] == "mcp-servers/everything"
        assert client.instructions and "Everything" in client.instructions
        tools = {tool.name: tool for tool in await client.list_all_tools()}
        assert set(tools) == BASE_TOOLS  # nothing declared: no sampling/elicitation/roots tools

        echo = tools["echo"]
        assert echo.annotations is not None and echo.annotations.read_only_hint is True
        assert texts(await client.call_tool("echo", {"message": "héllo ✓"})) == ["Echo: héllo ✓"]
        assert texts(await client.call_tool("get-sum", {"a": 2, "b": 3.5})) == [
            "The sum of 2 and 3.5 is 5.5."
        ]

        env = json.loads(texts(await client.call_tool("get-env"))[0])
        assert env["PATH"] == node_env()["PATH"]  # the env we gave reached the process

        image = await client.call_tool("get-tiny-image")
        assert [type(block) for block in image.content] == [TextContent, ImageContent, TextContent]
        assert isinstance(image.content[1], ImageContent)
        assert image.content[1].mime_type == "image/png"
        assert base64.b64decode(image.content[1].data).startswith(PNG_MAGIC)

        annotated = await client.call_tool(
            "get-annotated-message", {"messageType": "error", "includeImage": True}
        )
        first, picture = annotated.content
        assert isinstance(first, TextContent) and first.text == "Error: Operation failed"
        assert first.annotations is not None
        assert (first.annotations.priority, first.annotations.audience) == (
            1.0,
            ["user", "assistant"],
        )
        assert isinstance(picture, ImageContent) and picture.annotations is not None
        debug = await client.call_tool("get-annotated-message", {"messageType": "debug"})
        assert debug.content[0].annotations.audience == ["assistant"]  # type: ignore[union-attr]

        assert tools["get-structured-content"].output_schema is not None
        for city, celsius in (("New York", 33), ("Chicago", 36), ("Los Angeles", 73)):
            weather = await client.call_tool("get-structured-content", {"location": city})
            assert weather.structured_content["temperature"] == celsius  # validated on arrival
            assert json.loads(texts(weather)[0]) == weather.structured_content

        # taskSupport "required": call_tool asks for a task and follows it to the report
        # (the task tools in depth: test_everything_tasks.py)
        research = await client.call_tool("simulate-research-query", {"topic": "tea"})
        assert not research.is_error
        assert "# Research Report: tea" in texts(research)[0]


async def test_resource_links_references_and_gzip() -> None:
    async with everything() as client:
        linked = await client.call_tool("get-resource-links", {"count": 4})
        links = [block for block in linked.content if isinstance(block, ResourceLink)]
        assert [link.name for link in links] == [
            "Blob Resource 1",
            "Text Resource 2",
            "Blob Resource 3",
            "Text Resource 4",
        ]
        for index, link in enumerate(links, start=1):
            (contents,) = (await client.read_resource(link.uri)).contents
            if index % 2:
                assert isinstance(contents, BlobResourceContents)
                decoded = base64.b64decode(contents.blob).decode()
                assert decoded.startswith(f"Resource {index}: This is a base64 blob")
            else:
                assert isinstance(contents, TextResourceContents)
                assert contents.text.startswith(f"Resource {index}: This is a plaintext resource")

        reference = await client.call_tool(
            "get-resource-reference", {"resourceType": "Text", "resourceId": 7}
        )
        embedded = reference.content[1]
        assert isinstance(embedded, EmbeddedResource)
        assert embedded.resource.uri == "demo://resource/dynamic/text/7"

        original = b"mcpkit " * 100
        data = "data:text/plain;base64," + base64.b64encode(original).decode()
        zipped = await client.call_tool("gzip-file-as-resource", {"name": "m.gz", "data": data})
        (link,) = zipped.content
        assert isinstance(link, ResourceLink) and link.uri == "demo://resource/session/m.gz"
        (blob,) = (await client.read_resource(link.uri)).contents
        assert isinstance(blob, BlobResourceContents) and blob.mime_type == "application/gzip"
        assert gzip.decompress(base64.b64decode(blob.blob)) == original
        assert "demo://resource/session/m.gz" in {r.uri for r in await client.list_all_resources()}


async def test_resources_prompts_and_completion() -> None:
    async with everything() as client:
        resources = await client.list_all_resources()
        static = [r for r in resources if r.uri.startswith("demo://resource/static/document/")]
        assert {r.name for r in static} >= {"features.md", "instructions.md", "architecture.md"}
        for resource in static:
            (contents,) = (await client.read_resource(resource.uri)).contents
            assert isinstance(contents, TextResourceContents)
            assert contents.mime_type == resource.mime_type == "text/markdown"
            assert contents.text.strip()

        templates = {t.name: t.uri_template for t in await client.list_all_resource_templates()}
        assert templates == {
            "Dynamic Text Resource": "demo://resource/dynamic/text/{resourceId}",
            "Dynamic Blob Resource": "demo://resource/dynamic/blob/{resourceId}",
        }
        (text,) = (await client.read_resource("demo://resource/dynamic/text/12")).contents
        assert isinstance(text, TextResourceContents) and text.text.startswith("Resource 12: ")
        with pytest.raises(ProtocolError, match="Unknown resource: demo://resource/dynamic/text/0"):
            await client.read_resource("demo://resource/dynamic/text/0")

        prompts = {p.name: p for p in await client.list_all_prompts()}
        assert set(prompts) == {
            "simple-prompt",
            "args-prompt",
            "completable-prompt",
            "resource-prompt",
        }
        arguments = {
            "simple-prompt": None,
            "args-prompt": {"city": "Paris", "state": "Texas"},
            "completable-prompt": {"department": "Sales", "name": "Eve"},
            "resource-prompt": {"resourceType": "Blob", "resourceId": "5"},
        }
        rendered = {name: await client.get_prompt(name, args) for name, args in arguments.items()}
        first_text = {name: r.messages[0].content.text for name, r in rendered.items()}  # type: ignore[union-attr]
        assert first_text == {
            "simple-prompt": "This is a simple prompt without arguments.",
            "args-prompt": "What's weather in Paris, Texas?",
            "completable-prompt": "Please promote Eve to the head of the Sales team.",
            "resource-prompt": "This prompt includes the Blob resource with id: 5. Please "
            "analyze the following resource:",
        }
        embedded = rendered["resource-prompt"].messages[1].content
        assert isinstance(embedded, EmbeddedResource)
        assert embedded.resource.uri == "demo://resource/dynamic/blob/5"
        required = [(a.name, a.required) for a in prompts["args-prompt"].arguments or []]
        assert required == [("city", True), ("state", False)]
        with pytest.raises(ProtocolError) as missing:
            await client.get_prompt("args-prompt", {"state": "Texas"})
        assert missing.value.code == -32602 and "city" in missing.value.message

        department = await client.complete("department", "S", prompt="completable-prompt")
        assert department.completion.values == ["Sales", "Support"]
        names = await client.complete(
            "name", "", prompt="completable-prompt", context={"department": "Engineering"}
        )
        assert names.completion.values == ["Alice", "Bob", "Charlie"]
        kinds = await client.complete("resourceType", "T", prompt="resource-prompt")
        assert kinds.completion.values == ["Text"]
        ids = await client.complete(
            "resourceId", "42", resource="demo://resource/dynamic/text/{resourceId}"
        )
        assert ids.completion.values == ["42"]


async def test_logging_levels_and_subscriptions() -> None:
    logs: asyncio.Queue[LoggingMessageNotificationParams] = asyncio.Queue()
    updates: asyncio.Queue[str] = asyncio.Queue()
    async with everything(on_log=logs.put_nowait, on_resource_updated=updates.put_nowait) as client:
        uri = "demo://resource/dynamic/text/1"
        await client.set_logging_level("error")
        await client.subscribe_resource(uri)  # its "info" log is below the level: not sent
        assert logs.empty()
        await client.set_logging_level("info")
        await client.unsubscribe_resource(uri)  # the log is sent before the answer
        unsubscribed = logs.get_nowait()
        assert unsubscribed.level == "info"
        assert unsubscribed.data.startswith(f"Received Unsubscribe Resource request: {uri}")

        await client.subscribe_resource(uri)
        assert logs.get_nowait().data.startswith("Received Subscribe Resource request")
        await client.call_tool("toggle-subscriber-updates")
        assert await next_item(updates) == uri
        await client.call_tool("toggle-subscriber-updates")  # off again
        await client.unsubscribe_resource(uri)

        await client.set_logging_level("debug")
        await client.call_tool("toggle-simulated-logging")
        while (message := await next_item(logs)).data.startswith("Received"):
            pass
        assert message.level in (
            "debug",
            "info",
            "notice",
            "warning",
            "error",
            "critical",
            "alert",
            "emergency",
        )
        assert "-level message" in message.data or "level-message" in message.data
        await client.call_tool("toggle-simulated-logging")


async def test_progress_and_cancellation() -> None:
    async with everything() as client:
        seen: list[tuple[float, float | None]] = []
        done = await client.call_tool(
            "trigger-long-running-operation",
            {"duration": 0.3, "steps": 3},
            on_progress=lambda progress, total, message: seen.append((progress, total)),
        )
        assert texts(done) == ["Long running operation completed. Duration: 0.3 seconds, Steps: 3."]
        assert seen == [(1, 3), (2, 3), (3, 3)]

        first = asyncio.Event()
        call = asyncio.create_task(
            client.call_tool(
                "trigger-long-running-operation",
                {"duration": 0.8, "steps": 8},  # short: node exits only once its timers end
                on_progress=lambda *update: first.set(),
            )
        )
        await asyncio.wait_for(first.wait(), 5)
        call.cancel()
        with pytest.raises(asyncio.CancelledError):
            await call
        # The server dropped the call: its late answer would be ignored; the session goes on.
        assert texts(await client.call_tool("echo", {"message": "still here"})) == [
            "Echo: still here"
        ]


async def test_sampling_elicitation_and_roots(tmp_path: Path) -> None:
    sampled: list[CreateMessageRequestParams] = []
    asked: list[Any] = []
    answers: list[dict[str, Any]] = []
    logs: asyncio.Queue[LoggingMessageNotificationParams] = asyncio.Queue()

    def sample(params: CreateMessageRequestParams) -> dict[str, Any]:
        sampled.append(params)
        reply = f"echo: {params.messages[0].content.text}"  # type: ignore[union-attr]
        return {"role": "assistant", "content": {"type": "text", "text": reply}, "model": "m-1"}

    async def elicit(params: ElicitRequestFormParams | ElicitRequestURLParams) -> dict[str, Any]:
        asked.append(params)
        return answers.pop(0)

    async with everything(
        sampling=Sampling(sample),
        elicitation=Elicitation(elicit, url=True),
        roots=[tmp_path],
        on_log=logs.put_nowait,
    ) as client:
        assert {t.name for t in await client.list_all_tools()} == BASE_TOOLS | FEATURE_TOOLS

        result = await client.call_tool(
            "trigger-sampling-request", {"prompt": "why", "maxTokens": 7}
        )
        (params,) = sampled
        assert (params.max_tokens, params.temperature) == (7, 0.7)
        assert params.system_prompt == "You are a helpful test server."
        assert '"model": "m-1"' in texts(result)[0]
        assert "echo: Resource trigger-sampling-request context: why" in texts(result)[0]

        answers.append(
            {
                "action": "accept",
                "content": {
                    "name": "Ada Lovelace",
                    "email": "ada@example.com",
                    "integer": 42,
                    "number": 3.14,
                    "untitledMultipleSelectEnum": ["Piano"],
                    "titledSingleSelectEnum": "hero-2",
                },
            }
        )
        accepted = await client.call_tool("trigger-elicitation-request")
        form = asked[-1]
        assert isinstance(form, ElicitRequestFormParams)
        assert form.requested_schema.required == ["name"]
        assert texts(accepted)[0] == "✅ User provided the requested information!"
        assert "- Name: Ada Lovelace" in texts(accepted)[1]
        for action, shown in (("decline", "❌ User declined"), ("cancel", "⚠️ User cancelled")):
            answers.append({"action": action})
            assert texts(await client.call_tool("trigger-elicitation-request"))[0].startswith(shown)

        answers.append({"action": "accept"})
        opened = await client.call_tool(
            "trigger-url-elicitation", {"url": "https://example.com/connect", "elicitationId": "e7"}
        )
        url = asked[-1]
        assert isinstance(url, ElicitRequestURLParams)
        assert (url.url, url.elicitation_id) == ("https://example.com/connect", "e7")
        assert "✅ User completed the URL elicitation flow." in texts(opened)[0]

        arguments = {"url": "https://example.com/pay", "errorPath": True}
        with pytest.raises(URLElicitationRequired) as required:
            await client.call_tool("trigger-url-elicitation", arguments)
        (needed,) = required.value.elicitations
        assert needed["url"] == "https://modelcontextprotocol.io"
        assert "open https://modelcontextprotocol.io and retry" in str(required.value)
        answers.append({"action": "accept"})
        retried = await client.call_tool("trigger-url-elicitation", arguments)  # after "opening" it
        assert "✅ User completed" in texts(retried)[0]

        listed = await client.call_tool("get-roots-list")
        assert f"URI: {tmp_path.as_uri()}" in texts(listed)[0]
        while not (await next_item(logs)).data.startswith("Roots updated: 1 root"):
            pass
        await client.set_roots([tmp_path, "file:///srv/shared"])  # the server asks again
        while not (await next_item(logs)).data.startswith("Roots updated: 2 root(s)"):
            pass
        listed = await client.call_tool("get-roots-list")
        assert "URI: file:///srv/shared" in texts(listed)[0]
