"""`mcpkit chat` as a real subprocess: real stdio servers, the model a local stand-in for the
OpenAI API (the official SDK pointed at it), the user's answers typed on stdin. A tool call is
asked about inline and its answer remembered in the consent file; /tools, /servers and
/approve show and revoke."""

from __future__ import annotations

import asyncio
import json
import os
import sys
from pathlib import Path
from typing import Any

from tests.host.fake_llm import FakeLLM, fake_llm, openai_completion, openai_tool_call
from tests.http.servers import serving

ROOT = Path(__file__).resolve().parents[2]
SERVER = str(Path(__file__).with_name("host_server.py"))


def write_config(tmp_path: Path, servers: dict[str, Any]) -> Path:
    config = tmp_path / "mcp.json"
    config.write_text(json.dumps({"mcpServers": servers}))
    return config


async def run_piped(argv: list[str], typed: str, **openai: str) -> tuple[int, str, str]:
    """`argv` as a subprocess with `typed` on its stdin and the OPENAI_* variables `openai`
    (api_key=..., base_url=...) in place of any real key; its exit code, stdout, stderr."""
    env = {k: v for k, v in os.environ.items() if not k.endswith("_API_KEY")}
    env.update({f"OPENAI_{name.upper()}": value for name, value in openai.items()})
    process = await asyncio.create_subprocess_exec(
        *argv, stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE, cwd=ROOT, env=env,
    )  # fmt: skip
    out, err = await asyncio.wait_for(process.communicate(typed.encode()), 60)
    assert process.returncode is not None
    return process.returncode, out.decode(), err.decode()


async def chat(fake: FakeLLM, tmp_path: Path, typed: str) -> tuple[int, str, str]:
    config = write_config(
        tmp_path,
        {
            "alpha": {"command": sys.executable, "args": [SERVER, "alpha"]},
            "gone": {"command": str(tmp_path / "no-such-server")},
        },
    )
    argv = [
        sys.executable, "-m", "mcpkit", "chat", "--config", str(config),
        "--provider", "openai", "--base-url", f"{fake.url}/v1", "--model", "gpt-test",
        "--consent-file", str(tmp_path / "consent.json"),
    ]  # fmt: skip
    return await run_piped(argv, typed, api_key="sk-test-not-a-real-key")


async def test_a_chat_asks_before_a_tool_runs_and_remembers_always(tmp_path: Path) -> None:
    async with fake_llm() as fake:
        call = openai_tool_call("call_1", "alpha__target", {"text": "hello"})
        fake.script(
            openai_completion(None, [call], finish_reason="tool_calls"),
            openai_completion("alpha says hello"),
        )
        code, out, err = await chat(fake, tmp_path, "say hello\na\n/tools\n/servers\n/quit\n")
        assert code == 0, err
        assert "alpha: ready" in out
        assert "gone: failed" in out  # the missing command, with its reason
        assert "? alpha wants to run target" in out
        assert '-> alpha/target {"text":"hello"}' in out
        assert "model> alpha says hello" in out
        assert "alpha__target  Echo the text." in out
        # what the model was given: the tool, then the marked result
        first, second = (seen.body for seen in fake.requests)
        assert "alpha__target" in [t["function"]["name"] for t in first["tools"]]
        tool_message = second["messages"][-1]
        assert tool_message["role"] == "tool" and tool_message["tool_call_id"] == "call_1"
        assert "alpha: hello" in json.dumps(tool_message["content"])
        assert "sk-test-not-a-real-key" not in out + err

        # "always" was kept in the file: the next chat runs the tool without asking
        fake.script(
            openai_completion(None, [call], finish_reason="tool_calls"),
            openai_completion("again"),
        )
        code, out, err = await chat(
            fake, tmp_path, "again\n/approve\n/approve forget 1\n/approve\n"
        )
        assert code == 0, err
        assert "wants to run" not in out
        assert "model> again" in out
        assert "1. tool alpha target: allow (always)" in out
        assert "forgotten: tool alpha target" in out
        assert out.index("forgotten") < out.index("nothing remembered")


async def test_a_no_is_told_to_the_model(tmp_path: Path) -> None:
    async with fake_llm() as fake:
        call = openai_tool_call("call_9", "alpha__target", {"text": "x"})
        fake.script(
            openai_completion(None, [call], finish_reason="tool_calls"),
            openai_completion("understood"),
        )
        code, out, err = await chat(fake, tmp_path, "try\nn\n")
        assert code == 0, err
        assert "x  alpha/target" in out and "model> understood" in out
        refused = fake.requests[1].body["messages"][-1]
        assert refused["role"] == "tool" and "not run" in json.dumps(refused["content"])


async def test_without_a_model_it_says_how_to_give_one(tmp_path: Path) -> None:
    config = write_config(tmp_path, {})
    argv = [sys.executable, "-m", "mcpkit", "chat", "--config", str(config)]
    code, _, err = await run_piped(argv, "")
    assert code == 2
    assert "set ANTHROPIC_API_KEY or OPENAI_API_KEY" in err


async def test_the_thirty_line_agent_example_runs(tmp_path: Path) -> None:
    alpha = {"command": sys.executable, "args": [SERVER, "alpha"]}
    config = write_config(tmp_path, {"alpha": alpha})
    async with fake_llm() as fake:
        call = openai_tool_call("call_1", "alpha__target", {"text": "from the example"})
        fake.script(
            openai_completion(None, [call], finish_reason="tool_calls"),
            openai_completion("the example worked"),
        )
        argv = [sys.executable, str(ROOT / "examples" / "agent.py"), str(config), "go"]
        code, out, err = await run_piped(argv, "y\n", api_key="sk-test", base_url=f"{fake.url}/v1")
    assert code == 0, err
    lines = out.splitlines()
    assert lines[0] == "alpha: ready "
    assert "? alpha wants to run target" in lines[1]
    assert "-> target" in out
    assert lines[-1] == "the example worked"
    assert "from the example" in json.dumps(fake.requests[1].body["messages"][-1])


class WithModels:
    """The fake API with a model list (`GET /v1/models`, the OpenAI wire format)."""

    def __init__(self, fake: FakeLLM, names: list[str]) -> None:
        self.fake, self.names = fake, names

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] != "http" or (scope["method"], scope["path"]) != ("GET", "/v1/models"):
            return await self.fake(scope, receive, send)
        data = [{"id": n, "object": "model", "created": 0, "owned_by": "me"} for n in self.names]
        body = json.dumps({"object": "list", "data": data}).encode()
        headers = [(b"content-type", b"application/json")]
        await send({"type": "http.response.start", "status": 200, "headers": headers})
        await send({"type": "http.response.body", "body": body})


async def local_chat(tmp_path: Path, url: str, typed: str) -> tuple[int, str, str]:
    config = write_config(tmp_path, {})
    argv = [
        sys.executable, "-m", "mcpkit", "chat", "--config", str(config),
        "--provider", "openai", "--base-url", f"{url}/v1",
    ]  # fmt: skip
    return await run_piped(argv, typed, api_key="sk-test")


async def test_a_local_server_without_model_uses_the_one_it_lists(tmp_path: Path) -> None:
    async with fake_llm() as fake, serving(WithModels(fake, ["local-llama"])) as url:
        fake.script(openai_completion("hello from the local model"))
        code, out, err = await local_chat(tmp_path, url, "hi\n")
        assert code == 0, err
        assert "model: local-llama (the only one" in out
        assert "model> hello from the local model" in out
        assert fake.requests[0].body["model"] == "local-llama"


async def test_a_local_server_with_several_models_needs_one_named(tmp_path: Path) -> None:
    async with fake_llm() as fake, serving(WithModels(fake, ["llama", "qwen"])) as url:
        code, _, err = await local_chat(tmp_path, url, "hi\n")
        assert code == 2
        assert "--base-url needs --model: the server has llama, qwen" in err
        assert fake.requests == []  # no hosted model's name was sent to the local server
    async with fake_llm() as fake:  # no model list at all (404)
        code, _, err = await local_chat(tmp_path, fake.url, "hi\n")
        assert code == 2
        assert "--base-url needs --model (the server's model list could not be read" in err
        assert "sk-test" not in err
        assert [seen.method for seen in fake.requests] == ["GET"]


async def test_piped_answers_are_whole_words(
    tmp_path: Path,
) -> None:
    async with fake_llm() as fake:
        call = openai_tool_call("call_1", "alpha__target", {"text": "hello"})
        fake.script(
            openai_completion(None, [call], finish_reason="tool_calls"),
            openai_completion("done"),
        )
        code, out, err = await chat(fake, tmp_path, "say hello\nsure\nok\nYes\n")
        assert code == 0, err
        assert out.count("allow? [y/s/a/N]:") == 3
        assert out.count("please answer") == 2
        assert "<- alpha/target done [1]" in out and "| alpha: hello" in out
        assert "model> done" in out
