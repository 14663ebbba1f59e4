"""One way to register each kind (issue 23): tools, prompts and resources each have a decorator,
an `add_` method and a `remove_` method on the `Server`, with typed keyword options defined once
per kind; the registries' old public ways still work for one release and warn."""

from __future__ import annotations

import inspect
import re
import typing
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from mcpkit import Server
from mcpkit.server import (
    DirectoryOptions,
    Prompt,
    PromptOptions,
    ResourceOptions,
    Tool,
    ToolOptions,
)
from mcpkit.server.resources import ResourceRegistry
from mcpkit.testing import call, connect, texts, tools_by_name
from tests.typecheck import mypy_strict


def add(a: int, b: int = 1) -> int:
    """Add two numbers."""
    return a + b


def review(code: str) -> str:
    """Review some code."""
    return f"review {code}"


def today() -> str:
    return "sunny"


# -- the one way --------------------------------------------------------------------------------


async def test_each_kind_has_add_remove_and_a_decorator() -> None:
    server = Server("symmetric")
    server.add_tool(add, title="Add")
    server.add_prompt(review, title="Review")
    server.add_resource("weather://today", today, title="Today")
    server.add_resource("memo://static", "fixed text", mime_type="text/markdown")

    @server.tool(title="Minus")
    def minus(a: int) -> int:
        return -a

    @server.prompt(title="Greet")
    def greet(name: str) -> str:
        return f"Hello {name}"

    @server.resource("weather://{city}", title="City")
    def city(city: str) -> str:
        return f"rain in {city}"

    async with connect(server) as client:
        tools = await tools_by_name(client)
        assert {n: t["title"] for n, t in tools.items()} == {"add": "Add", "minus": "Minus"}
        assert texts(await call(client, "add", a=2)) == ["3"]
        prompts = (await client.request("prompts/list"))["prompts"]
        assert {p["name"]: p["title"] for p in prompts} == {"review": "Review", "greet": "Greet"}
        resources = (await client.request("resources/list"))["resources"]
        assert [r["uri"] for r in resources] == ["weather://today", "memo://static"]
        assert resources[1]["mimeType"] == "text/markdown"
        read = await client.request("resources/read", {"uri": "weather://paris"})
        assert texts(read) == ["rain in paris"]

        server.remove_tool("add")
        server.remove_prompt("review")
        server.remove_resource("weather://today")
        server.remove_resource("weather://{city}")
        assert list(await tools_by_name(client)) == ["minus"]
        prompts = (await client.request("prompts/list"))["prompts"]
        assert [p["name"] for p in prompts] == ["greet"]
        templates = (await client.request("resources/templates/list"))["resourceTemplates"]
        assert templates == []
    for remove in (server.remove_tool, server.remove_prompt, server.remove_resource):
        with pytest.raises(KeyError):
            remove("never-there")


async def test_a_feature_emptied_stays_declared_and_lists_empty() -> None:
    """The session negotiated the feature: removing its last item empties the list, it does
    not turn the method into -32601 (seen through the gateway, which lists every server)."""
    server = Server("emptied")
    server.add_tool(add)
    server.add_prompt(review)
    server.add_resource("memo://only", "x")
    async with connect(server) as client:
        server.remove_tool("add")
        server.remove_prompt("review")
        server.remove_resource("memo://only")
        assert (await client.request("tools/list"))["tools"] == []
        assert (await client.request("prompts/list"))["prompts"] == []
        assert (await client.request("resources/list"))["resources"] == []
    assert {"tools", "prompts", "resources"} <= set(server.capabilities())


async def test_add_takes_a_tool_or_prompt_built_beforehand() -> None:
    server = Server("built")
    tool = server.add_tool(Tool(add, name="plus"))
    prompt = server.add_prompt(Prompt(review, name="critique"))
    assert server.tools.get("plus") is tool and server.prompts.get("critique") is prompt
    with pytest.raises(TypeError, match="has its options already"):
        server.add_tool(Tool(add), title="Add")  # type: ignore[call-arg]
    async with connect(server) as client:
        assert texts(await call(client, "plus", a=1, b=2)) == ["3"]


def test_add_resource_serves_a_directory_given_as_a_path(tmp_path: Path) -> None:
    (tmp_path / "a.txt").write_text("a")
    server = Server("files")
    directory = server.add_resource("docs://", tmp_path, name="docs", max_files=10)
    assert directory.uri_template == "docs://{+path}"
    assert "docs://a.txt" in [r.definition["uri"] for r in server.resources.resources]
    server.remove_resource("docs://{+path}")
    assert len(server.resources) == 0


def test_add_resource_refuses_what_it_cannot_serve() -> None:
    server = Server("refusing")
    with pytest.raises(TypeError, match="a function, str or bytes content, or a directory"):
        server.add_resource("x://a", 42)  # type: ignore[call-overload]
    with pytest.raises(TypeError, match="size is computed"):
        server.add_resource("x://a", "text", size=3)
    with pytest.raises(TypeError, match="needs its URI"):
        server.add_resource(None, "text")  # type: ignore[call-overload]
    with pytest.raises(TypeError):  # an option of another kind, at run time too
        server.add_resource("x://a", today, list_files=False)  # type: ignore[call-overload]
    assert len(server.resources) == 0


def test_a_name_given_twice_is_refused() -> None:
    server = Server("twice")
    with pytest.raises(TypeError, match="given twice"):
        server.tool("one", name="two")
    with pytest.raises(TypeError, match="given twice"):
        server.prompt("one", name="two")


def test_hide_out_of_scope_is_one_attribute_on_the_server_and_every_registry() -> None:
    server = Server("hiding", hide_out_of_scope=True)
    assert server.hide_out_of_scope is True
    assert server.tools.hide_out_of_scope and server.prompts.hide_out_of_scope
    assert server.resources.hide_out_of_scope == True  # noqa: E712 (a bool-like, see below)
    server.hide_out_of_scope = False
    assert not server.tools.hide_out_of_scope and not server.prompts.hide_out_of_scope
    assert not server.resources.hide_out_of_scope
    server.resources.hide_out_of_scope = True  # the attribute, as on the other registries
    assert server.resources.hide_out_of_scope


# -- the options, defined once per kind ---------------------------------------------------------


def keywords(fn: Callable[..., Any]) -> dict[str, str]:
    """The keyword-only parameters of `fn` and their annotations (as written)."""
    return {
        name: str(p.annotation)
        for name, p in inspect.signature(fn).parameters.items()
        if p.kind is inspect.Parameter.KEYWORD_ONLY
    }


def typed_keys(options: type) -> dict[str, str]:
    return {name: ref.__forward_arg__ for name, ref in options.__annotations__.items()}


@pytest.mark.parametrize(
    ("options", "built_by"),
    [
        (ToolOptions, Tool.__init__),
        (PromptOptions, Prompt.__init__),
        (ResourceOptions, ResourceRegistry._add_function),
        (DirectoryOptions, ResourceRegistry._add_directory),
    ],
)
def test_the_options_type_spells_what_the_item_takes(
    options: type, built_by: Callable[..., Any]
) -> None:
    assert typed_keys(options) == keywords(built_by)


def test_static_content_takes_the_resource_options_but_size() -> None:
    expected = {k: v for k, v in typed_keys(ResourceOptions).items() if k != "size"}
    assert keywords(ResourceRegistry._add_static) == expected


def test_the_server_methods_take_the_options_types() -> None:
    def options_of(fn: Callable[..., Any]) -> str:
        return str(inspect.signature(fn).parameters["options"].annotation)

    tool, add_tool = options_of(Server.tool), options_of(Server.add_tool)
    prompt, add_prompt = options_of(Server.prompt), options_of(Server.add_prompt)
    assert tool == add_tool == "Unpack[ToolOptions]"
    assert prompt == add_prompt == "Unpack[PromptOptions]"
    assert options_of(Server.resource) == "Unpack[ResourceOptions]"
    # add_resource: one options type per kind of source (the signatures mypy sees).
    overloads = [options_of(fn) for fn in typing.get_overloads(Server.add_resource)]
    assert overloads == [
        "Unpack[ResourceOptions]",
        "Unpack[ResourceOptions]",
        "Unpack[DirectoryOptions]",
    ]


WRONG_KEYWORDS = """
from pathlib import Path

from mcpkit import Server

server = Server("typed")


def f(a: int) -> int:
    return a


server.add_tool(f, titel="x")  # E: tool
server.tool(titel="x")  # E: tool decorator
server.add_prompt(f, scope=["a"])  # E: prompt
server.prompt("p", icon=[])  # E: prompt decorator
server.resource("x://a", mimetype="text/plain")  # E: resource decorator
server.add_resource("x://a", f, mimetype="text/plain")  # E: resource function
server.add_resource("x://b", "text", list_files=False)  # E: static content
server.add_resource("x://", Path("."), mime_type="text/plain")  # E: directory
server.add_tool(f, run_in_thread="yes")  # E: a wrong type
server.add_tool(f, title="fine", scopes=["a"], task=True)
server.add_resource("x://c", "text", mime_type="text/plain")
server.add_resource(None, Path("."), include_hidden=True)
"""


def test_mypy_refuses_a_wrong_keyword(tmp_path: Path) -> None:
    checked = mypy_strict(WRONG_KEYWORDS, tmp_path)
    wanted = {i for i, line in enumerate(WRONG_KEYWORDS.splitlines(), 1) if "# E:" in line}
    flagged = checked.error_lines
    assert flagged == wanted, checked.stdout


# -- the old spellings: working, and warning for one release ------------------------------------

OLD_SPELLINGS: list[tuple[str, Callable[[Server, Path], Any], str]] = [
    ("tools.add", lambda s, _: s.tools.add(add), "server.add_tool()"),
    ("tools.decorator", lambda s, _: s.tools.decorator(add), "@server.tool"),
    ("tools.decorator()", lambda s, _: s.tools.decorator("add")(add), "@server.tool"),
    ("tools.put", lambda s, _: s.tools.put("add", Tool(add)), "server.add_tool()"),
    ("prompts.add", lambda s, _: s.prompts.add(review), "server.add_prompt()"),
    ("prompts.decorator", lambda s, _: s.prompts.decorator(review), "@server.prompt"),
    ("prompts.put", lambda s, _: s.prompts.put("review", Prompt(review)), "server.add_prompt()"),
    ("resources.decorator", lambda s, _: s.resources.decorator("w://t")(today), "@server.resource"),
    ("add_function", lambda s, _: s.resources.add_function("w://t", today), "add_resource()"),
    ("add_static", lambda s, _: s.resources.add_static("w://t", "x"), "server.add_resource()"),
    ("add_directory", lambda s, p: s.resources.add_directory(p, "d://"), "add_resource(uri, Path"),
]


@pytest.mark.parametrize(
    ("old", "register", "new"), OLD_SPELLINGS, ids=[o[0] for o in OLD_SPELLINGS]
)
async def test_old_registration_spellings_work_and_warn(
    old: str, register: Callable[[Server, Path], Any], new: str, tmp_path: Path
) -> None:
    (tmp_path / "a.txt").write_text("a")
    server = Server("old")
    with pytest.warns(DeprecationWarning, match="is deprecated; use .*" + re.escape(new)):
        register(server, tmp_path)
    assert len(server.tools) + len(server.prompts) + len(server.resources) >= 1
    async with connect(server) as client:
        if len(server.tools):
            assert texts(await call(client, "add", a=1)) == ["2"]
        elif len(server.prompts):
            asked = {"name": "review", "arguments": {"code": "x"}}
            assert texts(await client.request("prompts/get", asked)) == ["review x"]
        else:
            uri = "d://a.txt" if "directory" in old else "w://t"
            assert texts(await client.request("resources/read", {"uri": uri}))


def test_old_removal_spellings_work_and_warn() -> None:
    server = Server("old")
    server.add_tool(add)
    server.add_prompt(review)
    server.add_resource("w://t", today)
    with pytest.warns(DeprecationWarning, match=r"tools\.remove\(\) is deprecated; use server\."):
        server.tools.remove("add")
    with pytest.warns(DeprecationWarning, match=r"use server\.remove_prompt\(\)"):
        server.prompts.remove("review")
    with pytest.warns(DeprecationWarning, match=r"use server\.remove_resource\(\)"):
        server.resources.remove("w://t")
    assert len(server.tools) == len(server.prompts) == len(server.resources) == 0


def test_the_old_hide_out_of_scope_method_works_and_warns() -> None:
    server = Server("old")
    with pytest.warns(DeprecationWarning, match=r"use server\.hide_out_of_scope = hide"):
        server.resources.hide_out_of_scope(True)  # type: ignore[operator]
    assert server.resources.hide_out_of_scope


async def test_completion_providers_have_the_same_trio() -> None:
    server = Server("completing")
    server.add_prompt(review)

    def languages(argument: str, value: str, context: dict[str, str]) -> list[str]:
        return ["python", "rust"]

    server.add_completion("ref/prompt", "review", languages, argument="code")
    asked = {
        "ref": {"type": "ref/prompt", "name": "review"},
        "argument": {"name": "code", "value": ""},
    }
    async with connect(server) as client:
        assert (await client.request("completion/complete", asked))["completion"]["values"] == [
            "python",
            "rust",
        ]
        server.remove_completion("ref/prompt", "review", "code")
        assert (await client.request("completion/complete", asked))["completion"]["values"] == []
    with pytest.raises(KeyError):
        server.remove_completion("ref/prompt", "review", "code")


def test_old_completion_spellings_work_and_warn() -> None:
    server = Server("old")

    def provider(argument: str, value: str, context: dict[str, str]) -> list[str]:
        return []

    with pytest.warns(DeprecationWarning, match=r"use @server\.completion\(\)"):
        server.completions.decorator("ref/prompt", "a")(provider)
    with pytest.warns(DeprecationWarning, match=r"use server\.add_completion\(\)"):
        server.completions.add("ref/prompt", "b", provider)
    with pytest.warns(DeprecationWarning, match=r"use server\.remove_completion\(\)"):
        server.completions.remove("ref/prompt", "a")
    assert len(server.completions) == 1
