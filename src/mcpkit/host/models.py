"""Choosing a model for a sampling request from the server's `modelPreferences`.

A server cannot name the host's model: it does not know which ones the host has. MCP lets it
say what it would like instead (`../shared/spec/docs/2025-11-25/client/sampling.mdx`, "Model
Preferences"): `hints`, names matched as substrings of model names and tried in order, and
three priorities from 0 to 1 (cost, speed, intelligence). The host keeps a table of the models
it can use, each rated on the same three scales (`ModelInfo`), and `choose_model` picks:

1. the first hint that matches any model wins (case-insensitively, as a substring; a hint may
   also stand for other names through `aliases`, tried when the hint itself matches nothing);
   when it matches several models, the priorities choose among them;
2. no hint matches: the model with the best weighted score, sum(priority x rating);
3. no priorities either (or no preferences at all): `default`, else the table's first model.

Ties go to the model that comes first in the table, so the choice is always the same.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from pydantic import BaseModel

_PRIORITIES = (
    ("costPriority", "cost"),
    ("speedPriority", "speed"),
    ("intelligencePriority", "intelligence"),
)


@dataclass(frozen=True, slots=True)
class ModelInfo:
    """A model the host can use, rated 0..1 where higher is better for the server asking:
    `cost` 1.0 is the cheapest, `speed` 1.0 the fastest, `intelligence` 1.0 the most capable.
    `provider` says which provider serves it (free text, for the application's routing).

    Raises ValueError for a rating outside 0..1."""

    name: str
    provider: str = ""
    cost: float = 0.5
    speed: float = 0.5
    intelligence: float = 0.5

    def __post_init__(self) -> None:
        for field in ("cost", "speed", "intelligence"):
            _check_unit(f"ModelInfo {self.name!r} {field}", getattr(self, field))


def choose_model(
    preferences: Mapping[str, Any] | BaseModel | None,
    models: Sequence[ModelInfo],
    default: ModelInfo | str | None = None,
    *,
    aliases: Mapping[str, Sequence[str]] | None = None,
) -> ModelInfo:
    """The model of `models` that best fits MCP `preferences` (a `modelPreferences` dict or
    a ModelPreferences model; see the module docstring for the rules). `default` (a model or
    a model's name) is taken when the preferences say nothing to choose by. `aliases` maps a
    hint to other substrings that stand for it ({"gemini-flash": ["haiku"]}).

    Raises ValueError for an empty table, a `default` name not in it, a priority that is not
    a number from 0 to 1, or a hint that is not an object."""
    if not models:
        raise ValueError("no models to choose from")
    fallback = _default(models, default)
    prefs = _as_dict(preferences)
    weights = _weights(prefs)
    for hint in _hint_names(prefs.get("hints")):
        matched = _matching(models, hint, aliases or {})
        if matched:
            return _best(matched, weights) if weights else matched[0]
    if weights:
        return _best(models, weights)
    return fallback


def _default(models: Sequence[ModelInfo], default: ModelInfo | str | None) -> ModelInfo:
    if default is None:
        return models[0]
    if isinstance(default, ModelInfo):
        return default
    for model in models:
        if model.name == default:
            return model
    raise ValueError(f"default model {default!r} is not in the table")


def _as_dict(preferences: Mapping[str, Any] | BaseModel | None) -> dict[str, Any]:
    if preferences is None:
        return {}
    if isinstance(preferences, BaseModel):
        dumped: dict[str, Any] = preferences.model_dump(by_alias=True, exclude_none=True)
        return dumped
    return dict(preferences)


def _weights(prefs: Mapping[str, Any]) -> dict[str, float]:
    """The priorities given, by ModelInfo field; empty when the server gave none."""
    weights = {}
    for key, field in _PRIORITIES:
        value = prefs.get(key)
        if value is not None:
            weights[field] = _check_unit(key, value)
    return weights


def _hint_names(hints: Any) -> list[str]:
    if hints is None:
        return []
    if not isinstance(hints, Sequence) or isinstance(hints, str):
        raise ValueError(f"hints must be a list of objects, not {hints!r}")
    names = []
    for i, hint in enumerate(hints):
        if not isinstance(hint, Mapping):
            raise ValueError(f"hints[{i}] must be an object with a name, not {hint!r}")
        name = hint.get("name")
        if isinstance(name, str) and name:  # a hint without a name says nothing
            names.append(name)
    return names


def _matching(
    models: Sequence[ModelInfo], hint: str, aliases: Mapping[str, Sequence[str]]
) -> list[ModelInfo]:
    for needle in (hint, *aliases.get(hint, ())):
        found = [m for m in models if needle.casefold() in m.name.casefold()]
        if found:
            return found
    return []


def _best(models: Sequence[ModelInfo], weights: Mapping[str, float]) -> ModelInfo:
    """The highest score; the first in table order among equals (scores rounded, so that
    0.1 + 0.2 ties with 0.3)."""
    best, best_score = models[0], _score(models[0], weights)
    for model in models[1:]:
        score = _score(model, weights)
        if score > best_score:
            best, best_score = model, score
    return best


def _score(model: ModelInfo, weights: Mapping[str, float]) -> float:
    return round(sum(w * float(getattr(model, field)) for field, w in weights.items()), 9)


def _check_unit(what: str, value: Any) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float) or not 0 <= value <= 1:
        raise ValueError(f"{what} must be a number from 0 to 1, not {value!r}")
    return float(value)
