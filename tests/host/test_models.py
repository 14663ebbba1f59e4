"""choose_model: MCP modelPreferences against the host's table of models (hints in order as
substrings, then cost / speed / intelligence priorities, ties to table order)."""

from __future__ import annotations

from typing import Any

import pytest

from mcpkit.host.models import ModelInfo, choose_model
from mcpkit.types import ModelPreferences

HAIKU = ModelInfo("claude-haiku-5-5", "anthropic", cost=0.9, speed=0.9, intelligence=0.5)
SONNET = ModelInfo("claude-sonnet-5-5", "anthropic", cost=0.5, speed=0.6, intelligence=0.8)
OPUS = ModelInfo("claude-opus-5-5", "anthropic", cost=0.1, speed=0.3, intelligence=1.0)
MINI = ModelInfo("gpt-5.4-mini", "openai", cost=1.0, speed=0.9, intelligence=0.4)
LOCAL = ModelInfo("llama3.3:70b", "ollama", cost=1.0, speed=0.2, intelligence=0.6)
TABLE = [SONNET, HAIKU, OPUS, MINI, LOCAL]


def names(*hints: str) -> list[dict[str, str]]:
    return [{"name": h} for h in hints]


def test_the_first_hint_that_matches_wins_even_over_better_later_ones() -> None:
    prefs = {"hints": names("gemini", "opus", "haiku"), "costPriority": 1.0}
    assert choose_model(prefs, TABLE) == OPUS  # haiku is cheaper, but opus came first


def test_hints_match_as_substrings_whatever_the_case() -> None:
    assert choose_model({"hints": names("Sonnet")}, TABLE) == SONNET
    assert choose_model({"hints": names("llama3")}, TABLE) == LOCAL
    assert choose_model({"hints": names("5.4")}, TABLE) == MINI


def test_priorities_choose_among_the_models_one_hint_matches() -> None:
    claude = names("claude")
    assert choose_model({"hints": claude, "intelligencePriority": 1}, TABLE) == OPUS
    assert choose_model({"hints": claude, "speedPriority": 1}, TABLE) == HAIKU
    assert choose_model({"hints": claude}, TABLE) == SONNET  # no priorities: table order


def test_without_a_matching_hint_the_weighted_priorities_decide() -> None:
    assert choose_model({"hints": names("gemini"), "intelligencePriority": 1.0}, TABLE) == OPUS
    assert choose_model({"costPriority": 1.0, "speedPriority": 1.0}, TABLE) == MINI
    # cost .3 speed .8 intelligence .5 (the spec's example): haiku .27+.72+.25 = 1.24,
    # mini .3+.72+.2 = 1.22, sonnet .15+.48+.4 = 1.03
    prefs = {"costPriority": 0.3, "speedPriority": 0.8, "intelligencePriority": 0.5}
    assert choose_model(prefs, TABLE) == HAIKU


def test_ties_go_to_the_first_in_table_order() -> None:
    a = ModelInfo("a", cost=0.3, intelligence=0.0)
    b = ModelInfo("b", cost=0.1, intelligence=0.2)  # 0.1 + 0.2 ties with 0.3 once rounded
    assert choose_model({"costPriority": 1, "intelligencePriority": 1}, [a, b]) == a
    assert choose_model({"costPriority": 1, "intelligencePriority": 1}, [b, a]) == b
    assert choose_model({"costPriority": 1.0}, [MINI, LOCAL]) == MINI
    assert choose_model({"costPriority": 1.0}, [LOCAL, MINI]) == LOCAL


def test_no_preferences_give_the_default_or_the_first_model() -> None:
    assert choose_model(None, TABLE) == SONNET
    assert choose_model({}, TABLE, default="claude-opus-5-5") == OPUS
    assert choose_model({"hints": names("gemini")}, TABLE, default=HAIKU) == HAIKU
    assert choose_model({"hints": [{}, {"name": ""}]}, TABLE) == SONNET  # hints without a name


def test_aliases_map_a_hint_to_models_of_another_family() -> None:
    aliases = {"gemini-flash": ["haiku", "mini"]}
    prefs = {"hints": names("gemini-flash", "opus")}
    assert choose_model(prefs, TABLE, aliases=aliases) == HAIKU
    assert choose_model(prefs, TABLE) == OPUS  # without the alias the next hint wins
    assert choose_model(prefs, [MINI, OPUS], aliases=aliases) == MINI


def test_the_protocol_model_is_taken_as_well_as_a_dict() -> None:
    prefs = ModelPreferences.model_validate(
        {"hints": [{"name": "nothing"}], "speedPriority": 1, "intelligencePriority": 0.5}
    )
    assert choose_model(prefs, TABLE) == HAIKU


@pytest.mark.parametrize(
    ("prefs", "message"),
    [
        ({"costPriority": 1.5}, "costPriority must be a number from 0 to 1, not 1.5"),
        ({"speedPriority": -0.1}, "speedPriority must be a number from 0 to 1, not -0.1"),
        ({"intelligencePriority": "high"}, "intelligencePriority must be a number"),
        ({"costPriority": True}, "costPriority must be a number"),
        ({"costPriority": float("nan")}, "costPriority must be a number"),
        ({"hints": "claude"}, "hints must be a list"),
        ({"hints": ["claude"]}, r"hints\[0\] must be an object"),
    ],
)
def test_bad_preferences_are_a_clear_value_error(prefs: dict[str, Any], message: str) -> None:
    with pytest.raises(ValueError, match=message):
        choose_model(prefs, TABLE)


def test_bad_priorities_are_refused_even_when_a_hint_matches() -> None:
    with pytest.raises(ValueError, match="costPriority"):
        choose_model({"hints": names("opus"), "costPriority": 2}, TABLE)


def test_a_table_must_hold_models_and_the_default_name_must_be_in_it() -> None:
    with pytest.raises(ValueError, match="no models"):
        choose_model(None, [])
    with pytest.raises(ValueError, match="'gpt-9' is not in the table"):
        choose_model(None, TABLE, default="gpt-9")


@pytest.mark.parametrize("field", ["cost", "speed", "intelligence"])
def test_model_ratings_are_checked_too(field: str) -> None:
    with pytest.raises(ValueError, match=f"ModelInfo 'm' {field} must be a number from 0 to 1"):
        ModelInfo("m", **{field: 1.2})
