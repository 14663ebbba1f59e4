"""RFC 6570 URI templates: match a URI back to the variables a template would expand to it.

How this works: a template is parsed once into literals and expressions (`{op var1,var2*,v:3}`),
all four levels of RFC 6570 (the eight operators: simple, `+` reserved, `#` fragment, `.`
label, `/` path segments, `;` path-style, `?` query, `&` query continuation; the prefix
modifier `:n` and the explode modifier `*`). A server only matches: it lists its templates
and reads the URIs clients built from them, so there is no expansion here.

Matching runs expansion backwards, which RFC 6570 (section 1.4) warns is not always possible:
an undefined variable leaves no trace, and a comma can separate variables or list items. The
rules here, chosen to be predictable:

- Each expression becomes one part of an anchored regular expression, so literals between
  expressions decide where values end. A simple `{var}` value stops at `/`, `?` and `#`; a
  `{+var}` value stops at `?` and `#`; a `{#var}` value runs to the end.
- Positional operators (simple, `+`, `#`, `.`, `/`) hand values out left to right; missing
  trailing values mean those variables are undefined (absent from the result). A `.` inside a
  label value is never encoded, so `{.a,b}` and `{.list*}` split on every dot (a lone `{.var}`
  after a literal keeps its dots).
- A simple or `+` value directly followed by another expression is matched as short as
  possible, and a one-variable label directly after an expression takes the last dotted part
  only: `{name}{.ext}` reads `a.tar.gz` as name `a.tar`, ext `gz`. An expression of
  one simple or `+` variable that matched nothing leaves it undefined.
- Named operators (`;`, `?`, `&`) accept their variables in any order; a name the expression
  does not declare fails the match.
- Exploded variables (`{/path*}`, `{?tag*}`) come back as lists; so do the non-exploded
  variables named in `match(uri, lists=...)`, whose value is split on commas before decoding.
- Every value is percent-decoded exactly once, as UTF-8 (invalid UTF-8 fails the match). A
  prefix-modified variable (`{var:3}`) comes back as whatever the URI holds.
"""

from __future__ import annotations

import re
from collections.abc import Collection
from dataclasses import dataclass
from urllib.parse import quote, unquote

from mcpkit.errors import MCPError

__all__ = ["UriTemplate", "UriTemplateError", "is_template"]

_RESERVED = ":/?#[]@!$&'()*+,;="
_PCT = re.compile(r"%[0-9A-Fa-f]{2}")
_VARNAME = re.compile(r"(?:[A-Za-z0-9_]|%[0-9A-Fa-f]{2})+(?:\.(?:[A-Za-z0-9_]|%[0-9A-Fa-f]{2})+)*")
_VARSPEC = re.compile(rf"({_VARNAME.pattern})(?:(\*)|:([1-9][0-9]{{0,3}}))?")


class UriTemplateError(MCPError, ValueError):
    """A template that RFC 6570 does not allow (unclosed brace, bad name, reserved operator)."""


def is_template(uri: str) -> bool:
    """True when `uri` has at least one `{expression}` (a concrete URI cannot hold braces)."""
    return "{" in uri


@dataclass(frozen=True, slots=True)
class Operator:
    """What matching needs of one row of RFC 6570 appendix A."""

    char: str
    first: str
    sep: str
    named: bool


_OPERATORS = {
    "": Operator("", "", ",", False),
    "+": Operator("+", "", ",", False),
    "#": Operator("#", "#", ",", False),
    ".": Operator(".", ".", ".", False),
    "/": Operator("/", "/", "/", False),
    ";": Operator(";", ";", ";", True),
    "?": Operator("?", "?", "&", True),
    "&": Operator("&", "&", "&", True),
}
_FUTURE_OPERATORS = "=,!@|"


@dataclass(frozen=True, slots=True)
class VarSpec:
    name: str
    explode: bool = False  # a prefix (`:n`) is checked when parsing; matching ignores it


@dataclass(frozen=True, slots=True)
class Expression:
    operator: Operator
    variables: tuple[VarSpec, ...]


def _encode_literal(value: str) -> str:
    """Percent-encode a literal as expansion would: unreserved and reserved characters and
    existing %XX triplets stay."""
    out = []
    last = 0
    for triplet in _PCT.finditer(value):
        out.append(quote(value[last : triplet.start()], safe=_RESERVED))
        out.append(triplet.group())
        last = triplet.end()
    out.append(quote(value[last:], safe=_RESERVED))
    return "".join(out)


def _parse(template: str) -> tuple[str | Expression, ...]:
    parts: list[str | Expression] = []
    position = 0
    while position < len(template):
        start = template.find("{", position)
        end_literal = len(template) if start < 0 else start
        literal = template[position:end_literal]
        if "}" in literal:
            raise UriTemplateError(f"unmatched '}}' in URI template {template!r}")
        if literal:
            parts.append(_encode_literal(literal))
        if start < 0:
            break
        end = template.find("}", start)
        if end < 0:
            raise UriTemplateError(f"unclosed '{{' in URI template {template!r}")
        parts.append(_expression(template[start + 1 : end], template))
        position = end + 1
    return tuple(parts)


def _expression(body: str, template: str) -> Expression:
    if body[:1] in _FUTURE_OPERATORS and body:
        raise UriTemplateError(f"operator {body[0]!r} is reserved by RFC 6570 ({template!r})")
    operator = _OPERATORS.get(body[:1], _OPERATORS[""])
    specs = body[len(operator.char) :]
    variables = []
    for spec in specs.split(","):
        found = _VARSPEC.fullmatch(spec)
        if found is None:
            raise UriTemplateError(f"invalid variable {spec!r} in URI template {template!r}")
        name, star, _ = found.groups()
        variables.append(VarSpec(name, star is not None))
    return Expression(operator, tuple(variables))


class UriTemplate:
    """A parsed RFC 6570 template. Raises UriTemplateError for a malformed one."""

    __slots__ = ("_matcher", "_parts", "template", "variables")

    def __init__(self, template: str) -> None:
        self.template = template
        self._parts = _parse(template)
        names: dict[str, None] = {}
        for part in self._parts:
            if isinstance(part, Expression):
                names.update((spec.name, None) for spec in part.variables)
        self.variables: tuple[str, ...] = tuple(names)
        self._matcher: re.Pattern[str] | None = None

    def __str__(self) -> str:
        return self.template

    def __repr__(self) -> str:
        return f"UriTemplate({self.template!r})"

    def __eq__(self, other: object) -> bool:
        return isinstance(other, UriTemplate) and other.template == self.template

    def __hash__(self) -> int:
        return hash(self.template)

    @property
    def prefix(self) -> str:
        """The literal text before the first expression: every matching URI starts with it."""
        first = self._parts[0] if self._parts else ""
        return first if isinstance(first, str) else ""

    @property
    def exploded(self) -> frozenset[str]:
        """Variables written with `*` somewhere in the template."""
        return frozenset(
            spec.name
            for part in self._parts
            if isinstance(part, Expression)
            for spec in part.variables
            if spec.explode
        )

    # -- matching ------------------------------------------------------------------------------

    def match(self, uri: str, *, lists: Collection[str] = ()) -> dict[str, str | list[str]] | None:
        """The variables that expand to `uri`, or None when it does not fit the template.

        Values are strings; exploded variables and those named in `lists` are lists of strings.
        Undefined variables are absent. See the module docstring for the rules.
        """
        matcher = self._matcher
        if matcher is None:
            matcher = self._matcher = re.compile(self._pattern(), re.DOTALL)
        found = matcher.fullmatch(uri)
        if found is None:
            return None
        result: dict[str, str | list[str]] = {}
        expressions = (p for p in self._parts if isinstance(p, Expression))
        for index, expression in enumerate(expressions):
            text = found.group(f"e{index}")
            if text is None:
                continue
            try:
                values = _read(expression, text, lists)
            except UnicodeDecodeError:
                return None
            if values is None:
                return None
            for name, value in values.items():
                if name in result and result[name] != value:
                    return None  # the same variable twice with two values
                result[name] = value
        return result

    def _pattern(self) -> str:
        regex = []
        index = 0
        parts = self._parts
        for position, part in enumerate(parts):
            if isinstance(part, str):
                regex.append(re.escape(part))
                continue
            after = position > 0 and isinstance(parts[position - 1], Expression)
            before = position + 1 < len(parts) and isinstance(parts[position + 1], Expression)
            regex.append(_expression_pattern(part, f"e{index}", before, after))
            index += 1
        return "".join(regex)


# -- matching helpers ----------------------------------------------------------------------------

# What one value may hold, per operator, when matching (the separator is excluded separately).
_VALUE_CLASS = {"": "[^/?#]", "+": "[^?#]", "#": ".", ".": "[^/?#]", "/": "[^/?#]"}


def _expression_pattern(
    expression: Expression, group: str, before_expression: bool, after_expression: bool
) -> str:
    operator = expression.operator
    specs = expression.variables
    many = any(spec.explode for spec in specs)
    count = "*" if many else f"{{0,{len(specs)}}}"
    char = operator.char
    if char in ("", "+"):
        # Directly before another expression, as short as possible: `{name}{.ext}`.
        return f"(?P<{group}>{_VALUE_CLASS[char]}*{'?' if before_expression else ''})"
    if char == "#":
        return f"(?:\\#(?P<{group}>.*))?"
    if char in (".", "/"):
        sep = re.escape(operator.sep)
        whole = len(specs) == 1 and not many and not after_expression
        value = _VALUE_CLASS[char] if whole else f"[^/?#{sep}]"
        return f"(?P<{group}>(?:{sep}{value}*){count})"
    names = "|".join(re.escape(n) for n in sorted({s.name for s in specs}, key=len, reverse=True))
    stop = "[^;/?#]" if char == ";" else "[^&#]"
    piece = f"(?:{names})(?:={stop}*)?"
    if char == "?":
        rest = "*" if many else f"{{0,{len(specs) - 1}}}"
        return f"(?P<{group}>\\?{piece}(?:&{piece}){rest})?"
    return f"(?P<{group}>(?:{re.escape(operator.first)}{piece}){count})"


def _read(
    expression: Expression, text: str, lists: Collection[str]
) -> dict[str, str | list[str]] | None:
    """The values one expression's matched text holds (None: they do not fit)."""
    operator = expression.operator
    if operator.named:
        pieces = text[1:].split(operator.sep) if text else []
        return _read_named(expression, pieces, lists)
    if operator.char in ("", "+") and not text:
        return {}
    if operator.char in (".", "/"):
        if not text:
            return {}
        text = text[1:]
    specs = expression.variables
    if len(specs) == 1 and not specs[0].explode and specs[0].name not in lists:
        return {specs[0].name: unquote(text, errors="strict")}
    return _read_positional(specs, text.split(operator.sep), lists)


def _read_positional(
    specs: tuple[VarSpec, ...], pieces: list[str], lists: Collection[str]
) -> dict[str, str | list[str]] | None:
    result: dict[str, str | list[str]] = {}
    taken = 0
    for index, spec in enumerate(specs):
        if taken >= len(pieces):
            break
        if spec.explode or spec.name in lists:
            after = len(specs) - index - 1
            count = max(len(pieces) - taken - after, 1)
            items = pieces[taken : taken + count]
            result[spec.name] = [unquote(item, errors="strict") for item in items]
            taken += count
        else:
            result[spec.name] = unquote(pieces[taken], errors="strict")
            taken += 1
    return None if taken < len(pieces) else result


def _read_named(
    expression: Expression, pieces: list[str], lists: Collection[str]
) -> dict[str, str | list[str]] | None:
    exploded = {spec.name for spec in expression.variables if spec.explode}
    result: dict[str, str | list[str]] = {}
    for piece in pieces:
        name, _, raw = piece.partition("=")
        if name in exploded or name in lists:
            values = raw.split(",") if name in lists and name not in exploded else [raw]
            bucket = result.setdefault(name, [])
            assert isinstance(bucket, list)
            bucket.extend(unquote(v, errors="strict") for v in values)
        elif name in result:
            return None
        else:
            result[name] = unquote(raw, errors="strict")
    return result
