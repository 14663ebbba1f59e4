"""What the JSON Schema checker (`_jsonschema.py`) asks of values: JSON's types and equality
(1 == 1.0, True != 1), `multipleOf` with a tolerance for fractional steps, patterns compiled
once (None for an ECMA-262 pattern Python cannot read), and the formats it checks."""

from __future__ import annotations

import datetime
import math
import re
from collections.abc import Callable
from functools import lru_cache
from typing import Any, TypeGuard
from urllib.parse import urlsplit


def is_number(value: Any) -> TypeGuard[float]:
    return isinstance(value, int | float) and not isinstance(value, bool)


def is_integer(value: Any) -> bool:
    if isinstance(value, bool):
        return False
    return isinstance(value, int) or (
        isinstance(value, float) and math.isfinite(value) and value.is_integer()
    )


TYPE_TESTS: dict[str, Callable[[Any], bool]] = {
    "string": lambda value: isinstance(value, str),
    "integer": is_integer,
    "number": is_number,
    "boolean": lambda value: isinstance(value, bool),
    "object": lambda value: isinstance(value, dict),
    "array": lambda value: isinstance(value, list | tuple),
    "null": lambda value: value is None,
}


def json_equal(a: Any, b: Any) -> bool:
    """JSON equality: 1 == 1.0, but True != 1."""
    if isinstance(a, bool) or isinstance(b, bool):
        return isinstance(a, bool) and isinstance(b, bool) and a == b
    if isinstance(a, list | tuple) and isinstance(b, list | tuple):
        return len(a) == len(b) and all(json_equal(x, y) for x, y in zip(a, b, strict=True))
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(json_equal(a[k], b[k]) for k in a)
    return bool(a == b)


def is_multiple(value: float, step: float) -> bool:
    """Whether `value` is a multiple of `step` (> 0): exact for integer steps."""
    if isinstance(step, int):
        return value % step == 0
    try:
        quotient = value / step
    except OverflowError:  # an integer too large for a float
        quotient = math.inf
    if not math.isfinite(quotient):
        from fractions import Fraction  # rare: only for values far beyond a float's range

        return (Fraction(value) / Fraction(step)).denominator == 1
    return math.isclose(quotient, round(quotient), rel_tol=1e-9, abs_tol=1e-9)


@lru_cache(maxsize=256)
def compiled(pattern: str) -> re.Pattern[str] | None:
    try:
        return re.compile(pattern)
    except re.error:
        return None  # an ECMA-262 pattern Python cannot read: undecided


EMAIL = re.compile(r"^[^@\s]+@[^@\s]+\.[^@\s]+$")


def valid_date_time(text: str) -> bool:
    try:
        datetime.datetime.fromisoformat(text.replace("Z", "+00:00").replace("z", "+00:00"))
    except ValueError:
        return False
    return "T" in text.upper()


def valid_date(text: str) -> bool:
    try:
        datetime.date.fromisoformat(text)
    except ValueError:
        return False
    return len(text) == 10


def valid_uri(text: str) -> bool:
    parts = urlsplit(text)
    return bool(parts.scheme) and bool(parts.netloc or parts.path) and " " not in text


FORMATS: dict[str, Callable[[str], bool]] = {
    "email": lambda text: EMAIL.match(text) is not None,
    "uri": valid_uri,
    "date": valid_date,
    "date-time": valid_date_time,
}
