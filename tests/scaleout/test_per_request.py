"""2026-07-28 across workers: the sealed `requestState` of an input_required round is opened
by whichever worker the retry lands on (every worker has the same keys, from
$MCPKIT_REQUEST_STATE_KEYS), a key rotated in on one worker still opens what the others seal,
and workers that would each invent their own key refuse to start."""

from __future__ import annotations

import os
import subprocess
import sys
from typing import Any

import httpx
import orjson
import pytest

from mcpkit import Client, Server
from mcpkit.transports.http.redis_state import RedisState
from tests.http.servers import unused_port, wait_until_listening
from tests.scaleout.conftest import APP, REQUEST_STATE_KEY, ROOT, Cluster, mcpkit_run, processes

MODERN = "2026-07-28"
KEYS_VARIABLE = "MCPKIT_REQUEST_STATE_KEYS"
NEW_KEY = "scaleout-tests-request-state-key-2"
META = {
    "io.modelcontextprotocol/protocolVersion": MODERN,
    "io.modelcontextprotocol/clientCapabilities": {"elicitation": {"form": {}}},
}
HEADERS = {
    "accept": "application/json, text/event-stream",
    "content-type": "application/json",
    "mcp-protocol-version": MODERN,
    "mcp-method": "tools/call",
    "mcp-name": "confirm",
}
GO = {"action": "accept", "content": {"go": True}}


def answer(response: httpx.Response) -> dict[str, Any]:
    """The JSON-RPC answer in a JSON or an SSE response."""
    assert response.status_code == 200, response.text
    if response.headers["content-type"].startswith("application/json"):
        found: dict[str, Any] = response.json()
        return found
    for line in response.text.splitlines():
        if line.startswith("data:") and line[5:].strip():
            message = orjson.loads(line[5:])
            if "id" in message:
                return dict(message)
    raise AssertionError(f"no answer in {response.text!r}")


def confirm_call(request_id: int, **more: Any) -> dict[str, Any]:
    params = {"name": "confirm", "arguments": {}, "_meta": META, **more}
    return {"jsonrpc": "2.0", "id": request_id, "method": "tools/call", "params": params}


async def first_round(http: httpx.AsyncClient, url: str) -> tuple[str, str]:
    """Round 1 of `confirm` on `url`: (its requestState, the worker that sealed it)."""
    response = await http.post(url, json=confirm_call(1), headers=HEADERS)
    result = answer(response)["result"]
    assert result["resultType"] == "input_required"
    assert list(result["inputRequests"]) == ["elicit-1"]
    return result["requestState"], response.headers.get("x-worker", url)


async def second_round(http: httpx.AsyncClient, url: str, state: str) -> httpx.Response:
    retry = confirm_call(2, inputResponses={"elicit-1": GO}, requestState=state)
    return await http.post(url, json=retry, headers=HEADERS)


async def test_the_retry_of_an_input_required_round_is_served_by_the_other_worker(
    cluster: Cluster,
) -> None:
    async with httpx.AsyncClient(timeout=20) as http:
        state, sealer = await first_round(http, cluster.url)
        response = await second_round(http, cluster.url, state)
        assert response.headers["x-worker"] != sealer  # round robin: the other worker
        [content] = answer(response)["result"]["content"]
        assert content["text"].startswith("go on ")

        # And worker by worker, each opening what the other sealed.
        for sealing, opening in (cluster.workers, cluster.workers[::-1]):
            state, _ = await first_round(http, sealing)
            [content] = answer(await second_round(http, opening, state))["result"]["content"]
            assert content["text"].startswith("go on ")


async def test_our_client_answers_rounds_spread_over_both_workers(cluster: Cluster) -> None:
    asked: list[str] = []

    async def elicit(params: Any) -> dict[str, Any]:
        asked.append(params.message)
        return GO

    async with Client(cluster.url, mode=MODERN, elicitation=elicit) as client:
        results = [await client.call_tool("confirm", {}) for _ in range(2)]
    texts = [result.content[0].text for result in results]  # type: ignore[union-attr]
    assert asked == ["Go on?"] * 2 and all(t.startswith("go on ") for t in texts)


def worker_with_keys(port: int, redis: str, keys: str) -> list[str]:
    return ["env", f"{KEYS_VARIABLE}={keys}", *mcpkit_run(port, redis)]


async def test_a_key_rotated_in_on_one_worker_still_opens_what_the_other_sealed(
    redis_url: str,
) -> None:
    old_port, new_port = unused_port(), unused_port()
    rotated = f"{NEW_KEY},{REQUEST_STATE_KEY}"  # the new key seals, the old one still opens
    with processes(
        [
            worker_with_keys(old_port, redis_url, REQUEST_STATE_KEY),
            worker_with_keys(new_port, redis_url, rotated),
        ]
    ):
        old, new = (f"http://127.0.0.1:{port}/mcp" for port in (old_port, new_port))
        for url in (old, new):
            wait_until_listening(url, 20)
        async with httpx.AsyncClient(timeout=20) as http:
            state, _ = await first_round(http, old)  # sealed with the old key
            [content] = answer(await second_round(http, new, state))["result"]["content"]
            assert content["text"].startswith("go on ")

            state, _ = await first_round(http, new)  # sealed with the new key
            again = await second_round(http, new, state)
            assert answer(again)["result"]["content"][0]["text"].startswith("go on ")
            # A worker not given the new key yet cannot open it: why a new key goes second
            # on every worker before it goes first on any.
            refused = answer(await second_round(http, old, state))
            assert refused["error"]["code"] == -32602
            assert "requestState" in refused["error"]["message"]


def run_without_keys(*more: str, redis: str) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if k != KEYS_VARIABLE}
    argv = [sys.executable, "-m", "mcpkit", "run", str(APP), "--transport", "http",
            "--port", str(unused_port()), "--redis", redis, *more]  # fmt: skip
    return subprocess.run(
        argv, check=False, cwd=ROOT, env=env, capture_output=True, text=True, timeout=120
    )


@pytest.mark.parametrize("workers", ["1", "2"])
def test_workers_without_sealing_keys_refuse_to_start(redis_url: str, workers: str) -> None:
    finished = run_without_keys("--workers", workers, redis=redis_url)
    assert finished.returncode == 2  # a usage error: the configuration, not a bug
    assert "unexpected error" not in finished.stderr
    assert KEYS_VARIABLE in finished.stderr and "RequestStateKeys.generate()" in finished.stderr
    assert "Traceback" not in finished.stderr


def test_an_app_on_a_shared_state_without_keys_is_refused(
    redis_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv(KEYS_VARIABLE)
    with pytest.raises(ValueError, match=KEYS_VARIABLE):
        Server("alone").http_app(state=RedisState(redis_url))
    Server("one process").http_app()  # its own random key is fine
    keyed = Server("keyed", request_state_keys=[NEW_KEY])
    keyed.http_app(state=RedisState(redis_url))  # keys given by argument
