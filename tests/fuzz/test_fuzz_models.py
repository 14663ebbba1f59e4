"""The message models under mutated input: the specification's example messages with a subtree
replaced by any JSON value, a key removed or one added, validated by the 2026-07-28 model of
their type and by the era-neutral one clients return. Invariants: validation either fails
with pydantic's ValidationError (nothing else escapes) or gives an object whose wire form is
JSON and comes back the same when validated again."""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st
from pydantic import ValidationError

import mcpkit.types as neutral
from mcpkit.protocol.jsonrpc import dumps
from mcpkit.types import rev_2026_07_28
from tests.fuzz.conftest import FUZZ
from tests.fuzz.frames import json_values
from tests.test_types_examples import EXAMPLE_FILES, round_trip

EXAMPLES = [(p.parent.name, json.loads(p.read_text(encoding="utf-8"))) for p in EXAMPLE_FILES]


def paths(value: Any, prefix: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    """Every place in a JSON value (dict keys and list indexes), the root included."""
    found = [prefix]
    if isinstance(value, dict):
        for key, item in value.items():
            found += paths(item, (*prefix, key))
    elif isinstance(value, list):
        for index, item in enumerate(value):
            found += paths(item, (*prefix, index))
    return found


def mutated(value: Any, where: tuple[Any, ...], how: str, new: Any, key: str) -> Any:
    if not where:
        return new if how == "replace" else value
    head, rest = where[0], where[1:]
    copy: Any = dict(value) if isinstance(value, dict) else list(value)
    if rest:
        copy[head] = mutated(copy[head], rest, how, new, key)
    elif how == "replace":
        copy[head] = new
    elif how == "remove":
        del copy[head]
    elif isinstance(copy, dict):
        copy[key] = new
    return copy


@pytest.mark.skipif(not EXAMPLES, reason="the specification's examples are absent")
@FUZZ
@given(data=st.data())
def test_models_take_mutated_examples_or_refuse_them_cleanly(data: st.DataObject) -> None:
    type_name, example = data.draw(st.sampled_from(EXAMPLES))
    where = data.draw(st.sampled_from(paths(example)))
    how = data.draw(st.sampled_from(["replace", "remove", "add"]))
    value = mutated(example, where, how, data.draw(json_values), data.draw(st.text(max_size=8)))
    for module in (rev_2026_07_28, neutral):
        target = getattr(module, type_name, None)
        if target is None:
            continue
        try:
            _, wire = round_trip(target, value)
        except ValidationError:
            continue
        dumps(wire)  # JSON, whatever it holds (integers past 64 bits included)
        assert round_trip(target, wire)[1] == wire, (type_name, value)
