"""The stdio line splitter: any chunking gives the same messages; oversized lines are dropped."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from mcpkit.protocol.jsonrpc import Invalid
from mcpkit.transports.lines import LineSplitter

TOO_LONG_10 = "Parse error: message exceeds the size limit (10 bytes)"


class Recorder:
    def __init__(self, splitter: LineSplitter) -> None:
        self.lines: list[bytes | str] = []
        self.chunks = 0
        self.ended = False
        splitter.attach(self._receive, self._chunk, self._eof)

    def _receive(self, line: object) -> None:
        # A refused line arrives as a parse error naming the limit: recorded as its message.
        self.lines.append(line.message if isinstance(line, Invalid) else line)  # type: ignore[arg-type]

    def _chunk(self) -> None:
        self.chunks += 1

    def _eof(self) -> None:
        self.ended = True


@given(
    st.lists(st.binary(min_size=1, max_size=30).filter(lambda b: b"\n" not in b), max_size=6),
    st.lists(st.integers(min_value=0, max_value=300), max_size=10),
)
def test_any_chunking_gives_the_same_lines(lines: list[bytes], cuts: list[int]) -> None:
    stream = b"".join(line + b"\n" for line in lines)
    splitter = LineSplitter(limit=1000)
    seen = Recorder(splitter)
    start = 0
    for cut in [*sorted(c for c in set(cuts) if c <= len(stream)), len(stream)]:
        splitter.feed(stream[start:cut])
        start = cut
    splitter.feed_eof()
    assert seen.lines == [line for line in lines if not line.isspace()]
    assert seen.ended


def test_a_line_over_the_limit_is_dropped_as_it_streams_and_the_next_one_survives() -> None:
    splitter = LineSplitter(limit=10)
    seen = Recorder(splitter)
    splitter.feed(b'{"a":1}\n' + b"x" * 8)
    splitter.feed(b"y" * 8)  # now over the limit: dropped, placeholder delivered
    splitter.feed(b"z" * 50)  # still the same long line: ignored
    splitter.feed(b'end\n{"b":2}\n')
    assert seen.lines == [b'{"a":1}', TOO_LONG_10, b'{"b":2}']


def test_data_before_attach_is_kept_and_blank_lines_are_skipped() -> None:
    splitter = LineSplitter(limit=100)
    splitter.feed(b"one\n\n  \ntwo\n")
    splitter.feed_eof()
    seen = Recorder(splitter)
    assert seen.lines == [b"one", b"two"] and seen.ended


def test_one_chunk_done_per_chunk_that_completed_lines() -> None:
    splitter = LineSplitter(limit=100)
    seen = Recorder(splitter)
    splitter.feed(b"a\nb\nc")
    splitter.feed(b"c")  # no line completed: no chunk_done
    splitter.feed(b"\n")
    assert seen.lines == [b"a", b"b", b"cc"] and seen.chunks == 2


def test_a_last_line_without_a_newline_arrives_at_eof_once() -> None:
    splitter = LineSplitter(limit=1000)
    seen = Recorder(splitter)
    splitter.feed(b'{"a":1}\n{"b"')
    splitter.feed(b":2}")
    assert seen.lines == [b'{"a":1}']
    splitter.feed_eof()
    splitter.feed_eof()
    assert seen.lines == [b'{"a":1}', b'{"b":2}'] and seen.ended


def test_a_last_line_fed_before_attach_arrives_at_eof_too() -> None:
    splitter = LineSplitter(limit=1000)
    splitter.feed(b'{"a":1}')
    splitter.feed_eof()
    seen = Recorder(splitter)
    assert seen.lines == [b'{"a":1}'] and seen.ended


def test_an_oversized_last_line_is_not_delivered_at_eof() -> None:
    splitter = LineSplitter(limit=10)
    seen = Recorder(splitter)
    splitter.feed(b"x" * 25)
    splitter.feed_eof()
    assert seen.lines == [TOO_LONG_10] and seen.ended


def test_a_whole_line_over_the_limit_in_one_read_is_refused_too() -> None:
    # A pipe read brings up to 64 KiB: a line that size or less never waits in the buffer.
    splitter = LineSplitter(limit=10)
    seen = Recorder(splitter)
    splitter.feed(b'{"a":1}\n' + b"x" * 30 + b'\n{"b":2}\n')
    splitter.feed(b"y" * 11 + b"\n")
    assert seen.lines == [b'{"a":1}', TOO_LONG_10, b'{"b":2}', TOO_LONG_10]
