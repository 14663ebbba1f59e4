"""Every registration decorator used bare (`@server.tool`, FastMCP's usual spelling) does what
its called form does, or refuses with a clear error; it never registers nothing (issue 23)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from mcpkit import Server
from mcpkit.testing import call, connect, texts, tools_by_name
from tests.typecheck import mypy_strict


def add(a: int, b: int = 1) -> int:
    """Add two numbers.

    Args:
        a: the first number
        b: the second number
    """
    return a + b


def review(code: str, strict: bool = False) -> str:
    """Review some code."""
    return f"review {code} strictly={strict}"


async def listed(server: Server) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    async with connect(server) as client:
        tools = await tools_by_name(client)
        prompts = (await client.request("prompts/list"))["prompts"]
    return tools, prompts


async def test_bare_and_called_forms_register_the_same_tool_and_prompt() -> None:
    bare, called = Server("bare"), Server("called")
    bare_add = bare.tool(add)  # what `@bare.tool` does
    bare_review = bare.prompt(review)
    called_add = called.tool()(add)
    called_review = called.prompt()(review)

    assert bare_add is add and called_add is add  # the function itself comes back
    assert bare_review is review and called_review is review
    assert await listed(bare) == await listed(called)
    tools, prompts = await listed(bare)
    assert list(tools) == ["add"]
    assert tools["add"]["inputSchema"]["required"] == ["a"]
    assert [p["name"] for p in prompts] == ["review"]


async def test_bare_decorators_in_decorator_syntax() -> None:
    server = Server("demo")

    @server.tool
    def multiply(a: int, b: int) -> int:
        """Multiply two numbers."""
        return a * b

    @server.prompt
    def greet(name: str) -> str:
        return f"Hello {name}"

    def negate(a: int) -> int:
        return -a

    def bye(name: str) -> str:
        return f"Bye {name}"

    server.add_tool(negate)
    server.add_prompt(bye)

    # Still the user's functions, callable as themselves.
    assert multiply(3, 4) == 12 and multiply.__name__ == "multiply"
    assert greet("Ada") == "Hello Ada" and negate(2) == -2 and bye("Ada") == "Bye Ada"
    async with connect(server) as client:
        assert sorted(await tools_by_name(client)) == ["multiply", "negate"]
        assert texts(await call(client, "multiply", a=6, b=7)) == ["42"]
        assert texts(await call(client, "negate", a=5)) == ["-5"]
        asked = {"name": "greet", "arguments": {"name": "Ada"}}
        prompt = await client.request("prompts/get", asked)
        assert texts(prompt) == ["Hello Ada"]
        listed = (await client.request("prompts/list"))["prompts"]
        assert sorted(p["name"] for p in listed) == ["bye", "greet"]


def test_called_forms_keep_their_options() -> None:
    server = Server("demo")

    @server.tool(name="plus", title="Plus")
    def add_two(a: int) -> int:
        return a + 2

    @server.prompt("ask", title="Ask")
    def question(topic: str) -> str:
        return topic

    assert add_two(1) == 3 and question("x") == "x"
    tool = server.tools.get("plus")
    prompt = server.prompts.get("ask")
    assert tool is not None and tool.definition["title"] == "Plus"
    assert prompt is not None and prompt.definition["title"] == "Ask"


def test_a_bare_resource_decorator_is_refused_clearly() -> None:
    server = Server("demo")
    with pytest.raises(TypeError, match=r"@server\.resource needs the resource's URI"):

        @server.resource  # type: ignore[arg-type]
        def config() -> str:
            return "{}"

    assert len(server.resources) == 0


TYPED_SNIPPET = """
from mcpkit import Server

server = Server("typed")


@server.tool
def bare_tool(a: int) -> int:
    return a


@server.tool(title="Called")
def called_tool(a: int) -> int:
    return a


@server.prompt
def bare_prompt(topic: str) -> str:
    return topic


@server.prompt("named")
def called_prompt(topic: str) -> str:
    return topic


def registry_tool(a: int) -> int:
    return a


server.add_tool(registry_tool)


total: int = bare_tool(1) + called_tool(2) + registry_tool(3)
text: str = bare_prompt("a") + called_prompt("b")
# Still the functions' own signatures (strict mode fails on an ignore that is not needed):
bare_tool("x")  # type: ignore[arg-type]
bare_prompt(1)  # type: ignore[arg-type]
registry_tool("x")  # type: ignore[arg-type]
"""


def test_both_forms_keep_the_function_type_for_mypy(tmp_path: Path) -> None:
    checked = mypy_strict(TYPED_SNIPPET, tmp_path)
    assert checked.returncode == 0, checked.stdout
