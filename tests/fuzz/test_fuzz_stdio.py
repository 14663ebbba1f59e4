"""The stdio byte fuzzer: a real server process fed well-formed requests among junk (random
bytes, JSON of every type, message-shaped objects with wrong types, deep nesting, huge numbers,
batches), in three eras. Invariants on every example: each of our requests is answered exactly
once and within a bound whatever came around it (the junk costs nothing else), every stdout
line is JSON-RPC 2.0 with no traceback or path in an error, the process lives on; over the run,
its memory stays near where it started."""

from __future__ import annotations

from collections.abc import Iterator

import orjson
import pytest
from hypothesis import given
from hypothesis import strategies as st

from tests.fuzz.conftest import FUZZ
from tests.fuzz.corpus import entries, remember
from tests.fuzz.frames import MODERN, junk, valid_request
from tests.fuzz.stdio_target import StdioTarget

BATCHES = "2025-03-26"  # the one revision whose batches are answered
ERAS = ["2025-11-25", BATCHES, MODERN]


@pytest.fixture(scope="module", params=ERAS)
def target(request: pytest.FixtureRequest) -> Iterator[StdioTarget]:
    served = StdioTarget(request.param)
    served.baseline = served.rss_kib()  # type: ignore[attr-defined]
    yield served
    served.close()


def sentinel_request(ident: str, era: str) -> bytes:
    """The last request of an example: a ping (2026-07-28 has none: server/discover)."""
    if era != MODERN:
        return orjson.dumps({"jsonrpc": "2.0", "id": ident, "method": "ping"})
    meta = {"io.modelcontextprotocol/protocolVersion": MODERN}
    body = {"jsonrpc": "2.0", "id": ident, "method": "server/discover", "params": {"_meta": meta}}
    return orjson.dumps(body)


def run_example(target: StdioTarget, plan: list[tuple[bool, bytes]]) -> None:
    """Send the frames (True: one of our requests, its id made here), then check them."""
    target.examples += 1
    frames, ours = [], set()
    for k, (is_ours, frame) in enumerate(plan):
        numbered = frame
        if is_ours:  # one request, or a batch of them: each "ID" gets its own id
            for part in range(frame.count(b'"id":"ID"')):
                ident = f"e{target.examples}-{k}-{part}"
                numbered = numbered.replace(b'"id":"ID"', f'"id":"{ident}"'.encode(), 1)
                ours.add(ident)
        frames.append(numbered)
    sentinel = f"e{target.examples}-end"
    ours.add(sentinel)
    target.send([*frames, sentinel_request(sentinel, target.era)])
    counts = target.wait_for(ours)
    target.drain()
    assert all(counts[i] == 1 for i in ours), {i: n for i, n in counts.items() if n != 1}
    assert target.process.poll() is None


@st.composite
def plans(draw: st.DrawFn, era: str) -> list[tuple[bool, bytes]]:
    """Frames: our requests, junk, and (at 2025-03-26, where batches are answered) batches of
    our requests, each of which must be answered once inside the batch's array."""
    size = draw(st.integers(min_value=1, max_value=12))
    kinds = ["ours", "junk"] + (["batch"] if era == BATCHES else [])
    plan: list[tuple[bool, bytes]] = []
    for _ in range(size):
        kind = draw(st.sampled_from(kinds))
        if kind == "junk":
            plan.append((False, draw(junk)))
        elif kind == "ours":
            plan.append((True, draw(valid_request("ID", era))))
        else:
            batch = draw(st.lists(valid_request("ID", era), min_size=1, max_size=4))
            plan.append((True, b"[" + b",".join(batch) + b"]"))
    return plan


@FUZZ
@given(data=st.data())
def test_stdio_frames(target: StdioTarget, data: st.DataObject) -> None:
    plan = data.draw(plans(target.era))
    try:
        run_example(target, plan)
    except AssertionError:
        remember("stdio", {"era": target.era, "plan": [[o, f.decode("latin-1")] for o, f in plan]})
        raise


def test_memory_after_the_fuzzing_is_near_the_start(target: StdioTarget) -> None:
    grown = target.rss_kib() - target.baseline  # type: ignore[attr-defined]
    assert grown < 30 * 1024, f"RSS grew {grown} KiB over {target.examples} examples"


@pytest.mark.parametrize(("name", "entry"), entries("stdio") or [("none", None)])
def test_stdio_corpus(name: str, entry: dict | None) -> None:
    if entry is None:
        return  # an empty corpus: nothing found yet
    target = StdioTarget(entry["era"])
    try:
        run_example(target, [(o, f.encode("latin-1")) for o, f in entry["plan"]])
    finally:
        target.close()
