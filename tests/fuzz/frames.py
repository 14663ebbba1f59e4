"""What the fuzzers send: JSON-RPC messages well-formed, nearly so and hostile, for either era.

`valid_request(k)` makes a request we expect exactly one answer to (its id is a string no
junk can produce); `junk` is everything else: random bytes and text, JSON of every type,
objects shaped like messages with wrong types, deep nesting, huge numbers, batches.
"""

from __future__ import annotations

from typing import Any

from hypothesis import strategies as st

from mcpkit.protocol.jsonrpc import dumps

MODERN = "2026-07-28"
ENVELOPE = {
    "io.modelcontextprotocol/protocolVersion": MODERN,
    "io.modelcontextprotocol/clientCapabilities": {},
    "io.modelcontextprotocol/clientInfo": {"name": "fuzz", "version": "1"},
}
METHODS = [
    "ping",
    "tools/list",
    "tools/call",
    "resources/list",
    "resources/read",
    "resources/templates/list",
    "prompts/list",
    "prompts/get",
    "completion/complete",
    "logging/setLevel",
    "server/discover",
    "initialize",
    "no/such/method",
]

scalars = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(min_value=-(2**70), max_value=2**70),
    st.floats(allow_nan=False, allow_infinity=False),
    st.text(max_size=30),
)
json_values = st.recursive(
    scalars,
    lambda inner: st.one_of(
        st.lists(inner, max_size=4), st.dictionaries(st.text(max_size=10), inner, max_size=4)
    ),
    max_leaves=12,
)
tool_calls = st.one_of(
    st.fixed_dictionaries(
        {
            "name": st.just("add"),
            "arguments": st.fixed_dictionaries({"a": json_values, "b": json_values}),
        }
    ),
    st.fixed_dictionaries(
        {"name": st.sampled_from(["echo", "slow", "nope"]), "arguments": json_values}
    ),
    json_values,
)
params = st.one_of(
    st.none(),
    tool_calls,
    st.fixed_dictionaries({"uri": st.one_of(st.just("memo://greeting"), st.text(max_size=20))}),
    st.fixed_dictionaries({"name": st.just("ask"), "arguments": json_values}),
    st.fixed_dictionaries({"cursor": json_values}),
    st.dictionaries(st.text(max_size=8), json_values, max_size=3),
)


@st.composite
def valid_request(draw: Any, ident: str, era: str) -> bytes:
    method = draw(st.sampled_from([m for m in METHODS if m != "initialize"]))
    body: dict[str, Any] = {"jsonrpc": "2.0", "id": ident, "method": method}
    chosen = draw(params)
    if era == MODERN:
        chosen = dict(chosen) if isinstance(chosen, dict) else {}
        chosen["_meta"] = ENVELOPE
    if chosen is not None:
        body["params"] = chosen
    return dumps(body)


message_like = st.fixed_dictionaries(
    {},
    optional={
        "jsonrpc": st.one_of(st.just("2.0"), json_values),
        "id": json_values,
        "method": st.one_of(st.sampled_from(METHODS), json_values),
        "params": json_values,
        "result": json_values,
        "error": json_values,
    },
)
junk = st.one_of(
    st.binary(max_size=60),
    st.text(max_size=60).map(str.encode),
    json_values.map(dumps),
    message_like.map(lambda m: dumps(m, default=str)),
    st.lists(message_like, max_size=4).map(lambda m: dumps(m, default=str)),
    st.integers(min_value=1, max_value=3000).map(lambda n: b"[" * n + b"]" * n),
    st.integers(min_value=1, max_value=3000).map(lambda n: b'{"a":' * n + b"1" + b"}" * n),
    st.just(b'{"jsonrpc":"2.0","id":1,"method":"ping","params":{"n":' + b"9" * 5000 + b"}}"),
)
