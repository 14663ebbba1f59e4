"""SSE framing: what we encode parses back, under any chunking, by the WHATWG rules."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from mcpkit.protocol.sse import SSEEvent, SSEParser, encode_comment, encode_event


def parse_all(data: bytes, cuts: list[int] | None = None) -> list[SSEEvent]:
    parser = SSEParser()
    events: list[SSEEvent] = []
    points = [*sorted(set(cuts or [])), len(data)]
    start = 0
    for point in points:
        events += parser.feed(data[start:point])
        start = point
    return events


def test_message_priming_and_retry_events() -> None:
    stream = (
        encode_event(b"", event_id="s1-0", retry=3000)
        + encode_event(b'{"jsonrpc":"2.0","id":1,"result":{}}', event_id="s1-1")
        + encode_comment("keep-alive")
        + encode_event("two\nlines", event="custom")
    )
    events = parse_all(stream)
    assert events == [
        SSEEvent(data="", id="s1-0", retry=3000),
        SSEEvent(data='{"jsonrpc":"2.0","id":1,"result":{}}', id="s1-1"),
        SSEEvent(data="two\nlines", event="custom"),
    ]


def test_line_endings_and_field_rules_from_the_spec() -> None:
    stream = (
        b"data:a\r\ndata: b\rid: 7\nretry: x\nunknown: y\n: comment\n\nid: bad\0id\ndata: c\n\n"
    )
    parser = SSEParser()
    events = parser.feed(stream)
    assert events == [SSEEvent(data="a\nb", id="7"), SSEEvent(data="c")]
    assert parser.last_event_id == "7"


def test_a_cr_at_the_end_of_a_chunk_waits_for_a_possible_lf() -> None:
    parser = SSEParser()
    assert parser.feed(b"data: x\r") == []
    assert parser.feed(b"\n\r\n") == [SSEEvent(data="x")]


@given(
    st.lists(st.tuples(st.text(), st.none() | st.text(alphabet="abc123-", min_size=1)), max_size=5),
    st.lists(st.integers(min_value=0, max_value=400), max_size=8),
)
def test_round_trip_under_any_chunking(
    items: list[tuple[str, str | None]], cuts: list[int]
) -> None:
    stream = b"".join(encode_event(data, event_id=event_id) for data, event_id in items)
    events = parse_all(stream, [c for c in cuts if c <= len(stream)])
    expected = [
        SSEEvent(data=data.replace("\r\n", "\n").replace("\r", "\n"), id=event_id)
        for data, event_id in items
    ]
    assert events == expected


def test_a_ten_megabyte_event_parses_quickly() -> None:
    big = "x" * (10 * 1024 * 1024)
    parser = SSEParser()
    stream = encode_event(big, event_id="1")
    events = []
    for start in range(0, len(stream), 65536):
        events += parser.feed(stream[start : start + 65536])
    assert events == [SSEEvent(data=big, id="1")]
