"""completion/complete seen from a connected client: providers, context, limits, automatic
choices for Literal/Enum/bool prompt arguments, unknown references and bad requests."""

from __future__ import annotations

import asyncio
import enum
from typing import Any, Literal

import pytest

from mcpkit import Client, Server
from mcpkit.errors import INTERNAL_ERROR, INVALID_PARAMS, ProtocolError
from mcpkit.server.completion import Completion
from mcpkit.server.context import Context

LANGUAGES = ["python", "pytorch", "pyside", "rust", "ruby"]


class Level(enum.Enum):
    LOW = "low"
    LOUD = "loud"
    HIGH = "high"


def prompt_ref(name: str) -> dict[str, str]:
    return {"type": "ref/prompt", "name": name}


def template_ref(uri: str) -> dict[str, str]:
    return {"type": "ref/resource", "uri": uri}


async def complete(
    client: Client,
    ref: dict[str, str],
    name: str,
    value: str,
    resolved: dict[str, str] | None = None,
) -> dict[str, Any]:
    params: dict[str, Any] = {"ref": ref, "argument": {"name": name, "value": value}}
    if resolved is not None:
        params["context"] = {"arguments": resolved}
    result = await client.request("completion/complete", params)
    completion: dict[str, Any] = result["completion"]
    return completion


def review_server() -> Server:
    server = Server("complete")

    @server.prompt()
    def review(language: str, framework: str = "") -> str:
        return f"{language} {framework}"

    return server


async def test_a_provider_gets_the_argument_the_value_and_the_resolved_arguments() -> None:
    server = review_server()
    calls: list[tuple[str, str, dict[str, str]]] = []

    @server.completion("ref/prompt", "review")
    def complete_review(argument: str, value: str, context: dict[str, str]) -> list[str]:
        calls.append((argument, value, context))
        if argument == "language":
            return [lang for lang in LANGUAGES if lang.startswith(value)]
        if context.get("language") == "python":
            return [f for f in ("flask", "fastapi", "django") if f.startswith(value)]
        return []

    async with Client(server) as client:
        assert client.server_capabilities["completions"] == {}
        assert await complete(client, prompt_ref("review"), "language", "py") == {
            "values": ["python", "pytorch", "pyside"],
            "total": 3,
            "hasMore": False,
        }
        flask = await complete(
            client, prompt_ref("review"), "framework", "fla", {"language": "python"}
        )
        assert flask["values"] == ["flask"]
        assert (await complete(client, prompt_ref("review"), "framework", "fla"))["values"] == []
    assert calls == [
        ("language", "py", {}),
        ("framework", "fla", {"language": "python"}),
        ("framework", "fla", {}),
    ]


async def test_async_providers_for_templates_with_the_request_context() -> None:
    server = Server("templates")

    @server.completion("ref/resource", "repo://{owner}/{name}")
    async def repos(argument: str, value: str, context: dict[str, str], ctx: Context) -> Any:
        await asyncio.sleep(0)
        owner = context.get("owner", "?")
        return [f"{owner}-{value}-{ctx.protocol_version}"]

    async with Client(server, protocol_version="2025-06-18") as client:
        result = await complete(
            client, template_ref("repo://{owner}/{name}"), "name", "mc", {"owner": "acme"}
        )
        assert result["values"] == ["acme-mc-2025-06-18"]
        # A URI nobody registered has nothing to complete: an empty answer, not an error.
        nothing = await complete(client, template_ref("file:///{path}"), "path", "")
        assert nothing == {"values": [], "total": 0, "hasMore": False}


async def test_at_most_100_values_with_total_and_has_more() -> None:
    server = review_server()

    @server.completion("ref/prompt", "review")
    def many(argument: str, value: str, context: dict[str, str]) -> Any:
        count = int(value)
        if argument == "framework":  # a generator, and numbers turned to strings
            return (i for i in range(count))
        return [f"v{i}" for i in range(count)]

    async with Client(server) as client:
        exactly = await complete(client, prompt_ref("review"), "language", "100")
        assert (len(exactly["values"]), exactly["total"], exactly["hasMore"]) == (100, 100, False)

        over = await complete(client, prompt_ref("review"), "language", "250")
        assert over["values"] == [f"v{i}" for i in range(100)]
        assert (over["total"], over["hasMore"]) == (250, True)

        generated = await complete(client, prompt_ref("review"), "framework", "101")
        assert generated["values"][:3] == ["0", "1", "2"]
        assert (len(generated["values"]), generated["total"], generated["hasMore"]) == (
            100,
            101,
            True,
        )


async def test_providers_may_state_total_and_has_more_themselves() -> None:
    server = review_server()

    @server.completion("ref/prompt", "review")
    def stated(argument: str, value: str, context: dict[str, str]) -> Any:
        if argument == "language":
            return Completion(["python"], total=10, has_more=True)
        if value == "unknown-total":
            return Completion(["a", "b"], has_more=True)
        if value == "whole-result":
            return {"completion": {"values": ["w"], "total": 1, "hasMore": False}}
        return {"values": [str(i) for i in range(150)], "total": 1000}

    async with Client(server) as client:
        ref = prompt_ref("review")
        assert await complete(client, ref, "language", "") == {
            "values": ["python"],
            "total": 10,
            "hasMore": True,
        }
        assert await complete(client, ref, "framework", "unknown-total") == {
            "values": ["a", "b"],
            "hasMore": True,
        }
        assert await complete(client, ref, "framework", "whole-result") == {
            "values": ["w"],
            "total": 1,
            "hasMore": False,
        }
        capped = await complete(client, ref, "framework", "dict")
        assert (len(capped["values"]), capped["total"], capped["hasMore"]) == (100, 1000, True)


async def test_closed_set_arguments_complete_themselves() -> None:
    server = Server("automatic")

    @server.prompt()
    def style(
        language: Literal["python", "perl", "rust"],
        level: Level = Level.LOW,
        strict: bool = False,
        either: Literal["a"] | Level | None = None,
        free: str = "",
    ) -> str:
        return language

    @server.completion("ref/prompt", "other")
    def other(argument: str, value: str, context: dict[str, str]) -> list[str]:
        return []

    async with Client(server) as client:
        ref = prompt_ref("style")
        assert await complete(client, ref, "language", "P") == {
            "values": ["python", "perl"],
            "total": 2,
            "hasMore": False,
        }
        assert (await complete(client, ref, "language", ""))["values"] == ["python", "perl", "rust"]
        assert (await complete(client, ref, "level", "lo"))["values"] == ["low", "loud"]
        assert (await complete(client, ref, "strict", ""))["values"] == ["true", "false"]
        assert (await complete(client, ref, "either", ""))["values"] == ["a", "low", "loud", "high"]
        assert (await complete(client, ref, "free", "x"))["values"] == []
        assert (await complete(client, ref, "not_an_argument", ""))["values"] == []


async def test_a_provider_returning_none_falls_back_to_the_allowed_values() -> None:
    server = Server("fallback")

    @server.prompt()
    def style(language: Literal["python", "rust"], name: str) -> str:
        return language

    @server.completion("ref/prompt", "style")
    async def names(argument: str, value: str, context: dict[str, str]) -> list[str] | None:
        return ["alice", "bob"] if argument == "name" else None

    async with Client(server) as client:
        assert (await complete(client, prompt_ref("style"), "name", ""))["values"] == [
            "alice",
            "bob",
        ]
        assert (await complete(client, prompt_ref("style"), "language", "r"))["values"] == ["rust"]


async def test_closed_set_arguments_alone_declare_the_capability() -> None:
    server = Server("automatic-only")

    @server.prompt()
    def style(language: Literal["python", "rust"]) -> str:
        return language

    async with Client(server) as client:
        assert "completions" in client.server_capabilities
        assert (await complete(client, prompt_ref("style"), "language", "p"))["values"] == [
            "python"
        ]


async def test_per_argument_providers_come_before_the_prompt_wide_one() -> None:
    server = review_server()

    @server.completion("ref/prompt", "review", argument="framework")
    def frameworks(argument: str, value: str, context: dict[str, str]) -> list[str]:
        return ["flask"]

    @server.completion("ref/prompt", "review")
    def everything_else(argument: str, value: str, context: dict[str, str]) -> list[str]:
        return [f"any {argument}"]

    async with Client(server) as client:
        assert (await complete(client, prompt_ref("review"), "framework", ""))["values"] == [
            "flask"
        ]
        assert (await complete(client, prompt_ref("review"), "language", ""))["values"] == [
            "any language"
        ]
    server.remove_completion("ref/prompt", "review", argument="framework")
    with pytest.raises(KeyError, match="framework"):
        server.remove_completion("ref/prompt", "review", argument="framework")


async def test_unknown_prompts_and_malformed_requests_are_invalid_params() -> None:
    server = review_server()

    @server.completion("ref/prompt", "review")
    def complete_review(argument: str, value: str, context: dict[str, str]) -> list[str]:
        return []

    bad_params: list[Any] = [
        {"ref": {"type": "ref/tool", "name": "x"}, "argument": {"name": "a", "value": ""}},
        {"ref": {"type": "ref/prompt"}, "argument": {"name": "a", "value": ""}},
        {"ref": {"type": "ref/resource", "uri": 3}, "argument": {"name": "a", "value": ""}},
        {"ref": prompt_ref("review"), "argument": {"name": "language"}},
        {"ref": prompt_ref("review")},
        {
            "ref": prompt_ref("review"),
            "argument": {"name": "a", "value": ""},
            "context": {"arguments": {"b": 1}},
        },
    ]
    async with Client(server) as client:
        with pytest.raises(ProtocolError) as unknown:
            await complete(client, prompt_ref("no_such_prompt"), "a", "")
        assert unknown.value.code == INVALID_PARAMS
        assert "no_such_prompt" in unknown.value.message
        for params in bad_params:
            with pytest.raises(ProtocolError) as bad:
                await client.request("completion/complete", params)
            assert bad.value.code == INVALID_PARAMS, params
        assert (await complete(client, prompt_ref("review"), "language", ""))["values"] == []


async def test_failing_providers_are_internal_errors() -> None:
    server = review_server()

    @server.completion("ref/prompt", "review")
    def broken(argument: str, value: str, context: dict[str, str]) -> Any:
        if argument == "language":
            raise RuntimeError("secret internals")
        return 42  # not values

    async with Client(server) as client:
        for argument in ("language", "framework"):
            with pytest.raises(ProtocolError) as failed:
                await complete(client, prompt_ref("review"), argument, "")
            assert failed.value.code == INTERNAL_ERROR
            assert "secret" not in failed.value.message


async def test_without_providers_there_is_no_completions_capability() -> None:
    server = review_server()
    async with Client(server) as client:
        assert "completions" not in client.server_capabilities


def test_registration_mistakes_are_refused() -> None:
    server = Server("mistakes")

    def provider(argument: str, value: str, context: dict[str, str]) -> list[str]:
        return []

    with pytest.raises(ValueError, match="ref/prompt"):
        server.completion("ref/tool", "x")(provider)
    server.completion("ref/prompt", "x")(provider)
    with pytest.raises(ValueError, match="already registered"):
        server.completion("ref/prompt", "x")(provider)
