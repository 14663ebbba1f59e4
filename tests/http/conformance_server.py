"""The fixture the official conformance suites expect: the tool, resource and prompt names of
0.1.16 (`--suite all`) and of 0.2.0 (`--requirements 2026-07-28`: input_required rounds under
the suite's inputRequests keys, diagnostic tools), served over Streamable HTTP on 127.0.0.1;
the port is argv[1]."""

import asyncio
import base64
import json
import sys
from typing import Annotated, Any

from mcpkit import Server
from mcpkit.errors import INTERNAL_ERROR, ProtocolError
from mcpkit.server import Context, Header
from mcpkit.server.tools import Tool
from mcpkit.types import CreateMessageResult

PNG = base64.b64encode(
    bytes.fromhex(
        "89504e470d0a1a0a0000000d4948445200000001000000010806000000"
        "1f15c4890000000d49444154789c6360000002000154a24f5d0000000049454e44ae426082"
    )
).decode()
WAV = base64.b64encode(
    b"RIFF$\x00\x00\x00WAVEfmt \x10\x00\x00\x00\x01\x00\x01\x00D\xac\x00\x00\x88X\x01\x00"
    b"\x02\x00\x10\x00data\x00\x00\x00\x00"
).decode()
TEXT = {
    "type": "resource",
    "resource": {
        "uri": "test://embedded-resource",
        "mimeType": "text/plain",
        "text": "This is an embedded resource content.",
    },
}

server = Server("mcp-conformance-test-server", version="1.0.0")


def result(*content: dict[str, Any], is_error: bool = False) -> dict[str, Any]:
    return {"content": list(content), "isError": is_error}


@server.tool()
def test_simple_text() -> str:
    """Returns simple text content."""
    return "This is a simple text response for testing."


@server.tool(structured_output=False)
def test_image_content() -> dict[str, Any]:
    """Returns image content."""
    return result({"type": "image", "data": PNG, "mimeType": "image/png"})


@server.tool(structured_output=False)
def test_audio_content() -> dict[str, Any]:
    """Returns audio content."""
    return result({"type": "audio", "data": WAV, "mimeType": "audio/wav"})


@server.tool(structured_output=False)
def test_embedded_resource() -> dict[str, Any]:
    """Returns an embedded resource."""
    return result(TEXT)


@server.tool(structured_output=False)
def test_multiple_content_types() -> dict[str, Any]:
    """Returns text, image and resource content."""
    return result(
        {"type": "text", "text": "Multiple content types test:"},
        {"type": "image", "data": PNG, "mimeType": "image/png"},
        TEXT,
    )


@server.tool()
async def test_tool_with_logging(ctx: Context) -> str:
    """Sends log messages while it runs."""
    for text in ("Tool execution started", "Tool processing data", "Tool execution completed"):
        ctx.peer.notify(
            "notifications/message",
            {"level": "info", "data": text},
            related_id=ctx.request_id,
        )
        await asyncio.sleep(0.05)
    return "Tool with logging executed successfully"


@server.tool(structured_output=False)
def test_error_handling() -> dict[str, Any]:
    """Always fails."""
    return result(
        {"type": "text", "text": "This tool intentionally returns an error for testing"},
        is_error=True,
    )


@server.tool()
async def test_tool_with_progress(ctx: Context) -> str:
    """Reports progress 0, 50, 100 of 100."""
    for step in (0, 50, 100):
        await ctx.report_progress(step, 100)
        await asyncio.sleep(0.05)
    return "Progress test completed"


@server.tool()
async def test_sampling(prompt: str, ctx: Context) -> str:
    """Asks the client's LLM."""
    answer = await ctx.sample(prompt, max_tokens=100)
    return f"LLM response: {_said(answer)}"


@server.tool()
async def test_elicitation(message: str, ctx: Context) -> str:
    """Asks the user."""
    schema = {
        "type": "object",
        "properties": {
            "username": {"type": "string", "description": "User's response"},
            "email": {"type": "string", "description": "User's email address"},
        },
        "required": ["username", "email"],
    }
    answer = await ctx.peer.request(
        "elicitation/create",
        {"message": message, "requestedSchema": schema},
        related_id=ctx.request_id,
    )
    return f"User response: action={answer.get('action')}, content={answer.get('content')}"


@server.tool()
async def test_reconnection(ctx: Context) -> str:
    """Closes its SSE stream before answering (SEP-1699)."""
    await asyncio.sleep(0.05)
    ctx.close_sse_stream()
    await asyncio.sleep(0.2)
    return "Reconnection test completed"


def json_schema_2020_12_tool(
    name: str = "",
    address: dict[str, Any] | None = None,
    contactMethod: str = "",
    phone: str = "",
    email: str = "",
) -> str:
    return f"name={name}, address={address}, contact={contactMethod}:{phone or email}"


# SEP-1613/SEP-2106: the listing keeps JSON Schema 2020-12 keywords the function signature
# cannot say ($schema, $defs with $anchor, allOf/anyOf, if/then/else).
_schema_tool = Tool(
    json_schema_2020_12_tool,
    description="Tool with JSON Schema 2020-12 features",
    structured_output=False,
)
_schema_tool.definition["inputSchema"] = {
    "$schema": "https://json-schema.org/draft/2020-12/schema",
    "type": "object",
    "$defs": {
        "address": {
            "$anchor": "addressDef",
            "type": "object",
            "properties": {"street": {"type": "string"}, "city": {"type": "string"}},
        }
    },
    "properties": {
        "name": {"type": "string"},
        "address": {"$ref": "#/$defs/address"},
        "contactMethod": {"type": "string", "enum": ["phone", "email"]},
        "phone": {"type": "string"},
        "email": {"type": "string"},
    },
    "allOf": [{"anyOf": [{"required": ["phone"]}, {"required": ["email"]}]}],
    "if": {"properties": {"contactMethod": {"const": "phone"}}, "required": ["contactMethod"]},
    "then": {"required": ["phone"]},
    "else": {"required": ["email"]},
    "additionalProperties": False,
}
server.add_tool(_schema_tool)


async def _elicit(ctx: Context, message: str, schema: dict[str, Any]) -> dict[str, Any]:
    return await ctx.peer.request(
        "elicitation/create",
        {"message": message, "requestedSchema": schema},
        related_id=ctx.request_id,
    )


@server.tool()
async def test_elicitation_sep1034_defaults(ctx: Context) -> str:
    """Asks with a default for every primitive type."""
    schema = {
        "type": "object",
        "properties": {
            "name": {"type": "string", "default": "John Doe"},
            "age": {"type": "integer", "default": 30},
            "score": {"type": "number", "default": 95.5},
            "status": {
                "type": "string",
                "enum": ["active", "inactive", "pending"],
                "default": "active",
            },
            "verified": {"type": "boolean", "default": True},
        },
    }
    answer = await _elicit(ctx, "Please review and update the form fields with defaults", schema)
    return f"Elicitation completed: action={answer.get('action')}, content={answer.get('content')}"


@server.tool()
async def test_elicitation_sep1330_enums(ctx: Context) -> str:
    """Asks with every enum schema shape."""
    schema = {
        "type": "object",
        "properties": {
            "untitledSingle": {"type": "string", "enum": ["option1", "option2", "option3"]},
            "titledSingle": {
                "type": "string",
                "oneOf": [
                    {"const": "value1", "title": "First Option"},
                    {"const": "value2", "title": "Second Option"},
                ],
            },
            "legacyEnum": {
                "type": "string",
                "enum": ["opt1", "opt2"],
                "enumNames": ["Option One", "Option Two"],
            },
            "untitledMulti": {
                "type": "array",
                "items": {"type": "string", "enum": ["option1", "option2", "option3"]},
            },
            "titledMulti": {
                "type": "array",
                "items": {
                    "anyOf": [
                        {"const": "value1", "title": "First Choice"},
                        {"const": "value2", "title": "Second Choice"},
                    ]
                },
            },
        },
    }
    answer = await _elicit(ctx, "Please select options", schema)
    return f"Elicitation completed: action={answer.get('action')}, content={answer.get('content')}"


@server.resource("test://static-text", mime_type="text/plain")
def static_text() -> str:
    """A static text resource."""
    return "This is the content of the static text resource."


@server.resource("test://static-binary", mime_type="image/png")
def static_binary() -> bytes:
    """A static binary resource."""
    return base64.b64decode(PNG)


@server.resource("test://template/{id}/data", mime_type="application/json")
def template_data(id: str) -> str:
    """Data for an id."""
    return json.dumps({"id": id, "templateTest": True, "data": f"Data for ID: {id}"})


@server.resource("test://watched-resource", mime_type="text/plain")
def watched_resource() -> str:
    """A resource to subscribe to."""
    return "Watched resource content"


@server.prompt()
def test_simple_prompt() -> str:
    """A simple prompt."""
    return "This is a simple prompt for testing."


@server.prompt()
def test_prompt_with_arguments(arg1: str, arg2: str) -> str:
    """A prompt with arguments.

    Args:
        arg1: First test argument
        arg2: Second test argument
    """
    return f"Prompt with arguments: arg1='{arg1}', arg2='{arg2}'"


@server.prompt()
def test_prompt_with_embedded_resource(resourceUri: str) -> list[dict[str, Any]]:
    """A prompt embedding a resource.

    Args:
        resourceUri: URI of the resource to embed
    """
    resource = {
        "type": "resource",
        "resource": {
            "uri": resourceUri,
            "mimeType": "text/plain",
            "text": "Embedded resource content for testing.",
        },
    }
    return [
        {"role": "user", "content": resource},
        {
            "role": "user",
            "content": {"type": "text", "text": "Please process the embedded resource above."},
        },
    ]


@server.prompt()
def test_prompt_with_image() -> list[dict[str, Any]]:
    """A prompt with an image."""
    return [
        {"role": "user", "content": {"type": "image", "data": PNG, "mimeType": "image/png"}},
        {"role": "user", "content": {"type": "text", "text": "Please analyze the image above."}},
    ]


@server.completion("ref/prompt", "test_prompt_with_arguments")
def complete_arguments(argument: str, value: str, context: dict[str, str]) -> list[str]:
    return [word for word in ("paris", "park", "party") if word.startswith(value)]


# -- 2026-07-28 (conformance 0.2.0): input_required rounds under the keys the suite expects ----


def one_field(name: str, kind: str = "string") -> dict[str, Any]:
    """An elicitation schema asking for one required field."""
    return {"type": "object", "properties": {name: {"type": kind}}, "required": [name]}


NAME = one_field("name")
CONFIRM = one_field("ok", "boolean")


def _said(answer: CreateMessageResult) -> str:
    return str(getattr(answer.content, "text", answer.content))


@server.tool()
async def test_input_required_result_elicitation(ctx: Context) -> str:
    """Asks for the user's name (inputRequests key "user_name")."""
    who = await ctx.elicit("What is your name?", NAME, key="user_name")
    return f"Hello, {who.data['name'] if who.data else who.action}!"


@server.tool()
async def test_input_required_result_sampling(ctx: Context) -> str:
    """Asks the client's LLM (key "capital_question")."""
    answer = await ctx.sample(
        "What is the capital of France?", max_tokens=100, key="capital_question"
    )
    return f"LLM response: {_said(answer)}"


@server.tool()
async def test_input_required_result_list_roots(ctx: Context) -> str:
    """Asks for the client's roots (key "client_roots")."""
    roots = await ctx.list_roots(key="client_roots")
    return "Roots: " + ", ".join(root.uri for root in roots)


async def _confirm(ctx: Context) -> str:
    # The sealed requestState is verified before the handler runs again (tampering: -32602).
    answer = await ctx.elicit("Please confirm", CONFIRM, key="confirm")
    return f"state-ok: action={answer.action}, content={answer.data}"


@server.tool()
async def test_input_required_result_request_state(ctx: Context) -> str:
    """Asks for a confirmation; the retry carries the sealed requestState."""
    return await _confirm(ctx)


@server.tool()
async def test_input_required_result_tampered_state(ctx: Context) -> str:
    """Like the request-state tool; a tampered requestState is refused."""
    return await _confirm(ctx)


@server.tool()
async def test_input_required_result_multiple_inputs(ctx: Context) -> str:
    """Asks for a name, a greeting and the roots in one round."""
    who, greeting, roots = await ctx.gather_input(
        ctx.elicit_request("What is your name?", NAME, key="user_name"),
        ctx.sample_request("Generate a greeting", max_tokens=50, key="greeting"),
        ctx.roots_request(key="client_roots"),
    )
    return f"{_said(greeting)} {who.data}, {len(roots)} root(s)"


@server.tool()
async def test_input_required_result_multi_round(ctx: Context) -> str:
    """Two rounds: a name (key "step1"), then a colour (key "step2")."""
    who = await ctx.elicit("Step 1: What is your name?", NAME, key="step1")
    color = await ctx.elicit(
        "Step 2: What is your favorite color?", one_field("color"), key="step2"
    )
    return f"name={who.data}, color={color.data}"


@server.tool()
async def test_input_required_result_capabilities(ctx: Context) -> str:
    """Asks only for what the request's client capabilities declare."""
    declared = ctx.client_capabilities
    asks = []
    if "sampling" in declared:
        asks.append(ctx.sample_request("Say hello", max_tokens=20, key="greeting"))
    if "elicitation" in declared:
        asks.append(ctx.elicit_request("What is your name?", NAME, key="user_name"))
    answers = await ctx.gather_input(*asks)
    return f"{len(answers)} answer(s)"


@server.prompt()
async def test_input_required_result_prompt(ctx: Context) -> str:
    """A prompt that asks for its context first (key "user_context")."""
    answer = await ctx.elicit(
        "What context should the prompt use?", one_field("context"), key="user_context"
    )
    return f"Prompt with context: {answer.data}"


@server.tool()
async def test_missing_capability(ctx: Context) -> str:
    """Needs sampling: without the client's sampling capability the call fails (-32021)."""
    answer = await ctx.sample("Say something", max_tokens=20)
    return f"LLM response: {_said(answer)}"


@server.tool()
async def test_streaming_elicitation(ctx: Context) -> str:
    """Elicits; at 2026-07-28 that is an input_required result, never a request."""
    who = await ctx.elicit("What is your name?", NAME)
    return f"Hello, {who.data}!"


@server.tool()
async def test_logging_tool(ctx: Context) -> str:
    """Logs at info; a request without a logLevel gets no log messages."""
    for text in ("Logging tool started", "Logging tool finished"):
        await ctx.info(text)
    return "Logging tool done"


@server.tool()
def test_custom_headers(region: Annotated[str, Header("Region")]) -> str:
    """Takes its region from the Mcp-Param-Region header too (SEP-2243: they must match)."""
    return f"region={region}"


def _dynamic() -> str:
    """Appears and disappears to exercise list_changed."""
    return "dynamic"


@server.tool()
def test_trigger_tool_change() -> str:
    """Adds or removes a tool (list_changed goes to subscribers)."""
    if "test_dynamic_tool" in server.tools:
        server.remove_tool("test_dynamic_tool")
        return "removed test_dynamic_tool"
    server.add_tool(_dynamic, name="test_dynamic_tool")
    return "added test_dynamic_tool"


@server.tool()
def test_trigger_prompt_change() -> str:
    """Adds or removes a prompt (list_changed goes to subscribers)."""
    if "test_dynamic_prompt" in server.prompts:
        server.remove_prompt("test_dynamic_prompt")
        return "removed test_dynamic_prompt"
    server.prompt("test_dynamic_prompt")(_dynamic)
    return "added test_dynamic_prompt"


# -- tasks (the 2026-07-28 extension's scenarios, tasks-*) -----------------------------------


@server.tool()
def greet(name: str) -> str:
    """Sync only: never a task."""
    return f"Hello, {name}!"


@server.tool(task=True)
async def slow_compute(seconds: float = 1, label: str = "") -> str:
    """Sleeps `seconds`, then answers; runs as a task for a client that declares tasks."""
    await asyncio.sleep(seconds)
    return f"computed {label} after {seconds:g}s"


@server.tool(task="required", structured_output=False)
async def failing_job() -> dict[str, Any]:
    """Always a tool error, after a moment (the task is `completed` with isError)."""
    await asyncio.sleep(0.5)
    return result({"type": "text", "text": "the job failed"}, is_error=True)


@server.tool(task=True)
async def protocol_error_job() -> str:
    """Fails with a JSON-RPC error (the task is `failed` with `error`)."""
    await asyncio.sleep(0.1)
    raise ProtocolError(INTERNAL_ERROR, "the job crashed")


@server.tool(task=True)
async def confirm_delete(filename: str, ctx: Context) -> str:
    """Asks for a confirmation inside the task (input_required, answered by tasks/update)."""
    schema = {"type": "object", "properties": {"confirm": {"type": "boolean"}}}
    answer = await ctx.elicit(f"Delete {filename}?", schema)
    confirmed = answer.action == "accept" and bool((answer.data or {}).get("confirm"))
    return f"{filename} {'deleted' if confirmed else 'kept'}"


@server.tool(task=True)
async def multi_input(ctx: Context) -> str:
    """Two questions at once: two input requests pending together."""
    schema = {
        "type": "object",
        "properties": {"name": {"type": "string"}, "confirm": {"type": "boolean"}},
    }
    first, second = await ctx.gather_input(
        ctx.elicit_request("First name?", schema), ctx.elicit_request("Second name?", schema)
    )
    return f"got {first.action} and {second.action}"


@server.tool(task="required", task_if=lambda ctx: False)
async def test_tool_with_task(ctx: Context) -> str:
    """Asks in an input_required round first, then goes on as a task."""
    who = await ctx.elicit("What is your name?", NAME, key="user_name")
    await ctx.continue_as_task("working on it")
    await asyncio.sleep(0.2)
    return f"Hello, {(who.data or {}).get('name')}!"


if __name__ == "__main__":
    server.run(transport="http", port=int(sys.argv[1]))
