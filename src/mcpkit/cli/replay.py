"""`mcpkit inspect TARGET --replay FILE`: send a recorded session's requests again (a
recording of `mcpkit inspect --record FILE`, or the page's history.jsonl) and report the
answers that differ from the recorded ones; exit 1 when one does.

The requests the client sent (`dir: "send"` with a method and an id) are sent again in order,
except the handshake (`initialize`, `server/discover`: the connection makes its own). Each
answer is compared with the recorded one after removing what changes from run to run:
JSON-RPC ids, the result's own `_meta`, the request's `_meta` (progress tokens, per-request
era fields) and `volatile` keys (task ids and timestamps). Server-to-client requests
(sampling, elicitation, roots) are not answered during a replay: the server sees an error.
"""

from __future__ import annotations

import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import orjson

from mcpkit.cli.loading import UsageError
from mcpkit.cli.render import as_json
from mcpkit.host.visible import json_text, visible

JSONObject = dict[str, Any]
SKIPPED = {"initialize", "server/discover"}
VOLATILE = {"taskId", "createdAt", "lastUpdatedAt", "timestamp"}
MAX_SHOWN = 400  # characters of an answer shown for people


@dataclass
class Recorded:
    """One request of the recording and the answer it got (None: none was recorded)."""

    method: str
    params: JSONObject | None
    answer: JSONObject | None


def load(path: Path) -> list[Recorded]:
    """The client's requests of a recording, with their answers. Raises UsageError."""
    try:
        lines = path.read_bytes().splitlines()
        entries = [orjson.loads(line) for line in lines if line.strip()]
    except (OSError, orjson.JSONDecodeError) as exc:
        raise UsageError(f"cannot read the recording {path}: {exc}") from None
    if not entries or not isinstance(entries[0], dict) or entries[0].get("dir") != "meta":
        raise UsageError(f"{path} is not a recording (its first line is not the meta line)")
    requests: dict[Any, Recorded] = {}
    order: list[Recorded] = []
    for entry in entries[1:]:
        message = entry.get("message") if isinstance(entry, dict) else None
        if not isinstance(message, dict) or "id" not in message:
            continue  # notifications, batches
        key = orjson.dumps(message["id"])
        if entry.get("dir") == "send" and isinstance(message.get("method"), str):
            if message["method"] not in SKIPPED:
                recorded = Recorded(message["method"], message.get("params"), None)
                requests[key] = recorded
                order.append(recorded)
        elif entry.get("dir") == "recv" and "method" not in message and key in requests:
            requests.pop(key).answer = message
    return order


def comparable(answer: JSONObject | None) -> Any:
    """An answer without what differs from run to run."""
    if answer is None:
        return None
    if "error" in answer:
        error = answer["error"] or {}
        return {"error": {"code": error.get("code"), "message": error.get("message")}}
    result = dict(answer.get("result") or {})
    result.pop("_meta", None)
    return {"result": _without_volatile(result)}


def _without_volatile(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: _without_volatile(v) for k, v in value.items() if k not in VOLATILE}
    if isinstance(value, list):
        return [_without_volatile(item) for item in value]
    return value


async def send(client: Any, recorded: Recorded) -> JSONObject:
    """The answer to `recorded`'s request now, shaped as a JSON-RPC answer (no id)."""
    from mcpkit.errors import ProtocolError

    params = dict(recorded.params or {})
    params.pop("_meta", None)
    try:
        result = await client.request(recorded.method, params or None)
    except ProtocolError as exc:
        return {"error": {"code": exc.code, "message": exc.message, "data": exc.data}}
    return {"result": result}


async def run(args: Any) -> int:
    """Replay `args.replay` against `args.target`; print what differs; the exit code."""
    from mcpkit.cli.commands import connect

    recorded = load(Path(args.replay))
    differences: list[JSONObject] = []
    async with connect(args) as client:
        for number, request in enumerate(recorded, 1):
            now = await send(client, request)
            then = comparable(request.answer)
            if then is not None and comparable(now) != then:
                differences.append(
                    {
                        "index": number,
                        "method": request.method,
                        "recorded": then,
                        "now": comparable(now),
                    }
                )
    summary = {"requests": len(recorded), "different": differences}
    if args.json:
        as_json(summary, sys.stdout)
    else:
        _print(summary)
    return 1 if differences else 0


def _print(summary: JSONObject) -> None:
    different = summary["different"]
    print(f"{summary['requests']} requests replayed, {len(different)} answered differently")
    for item in different:
        print(visible(f"#{item['index']} {item['method']}:"))
        print(f"  recorded: {_short(item['recorded'])}")
        print(f"  now:      {_short(item['now'])}")


def _short(value: Any) -> str:
    text = json_text(orjson.dumps(value, option=orjson.OPT_SORT_KEYS).decode())
    return text if len(text) <= MAX_SHOWN else text[:MAX_SHOWN] + "..."
