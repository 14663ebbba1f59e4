"""No test asserts something that cannot fail: a non-empty literal (`assert "..."`,
`assert (a, b)`, a written-out list or dict), an f-string, a lambda, `x == x`, or
`isinstance(x, object)`. Such an assert passes whatever the code does (issue 23)."""

from __future__ import annotations

import ast
from pathlib import Path

TESTS = Path(__file__).parent


def _always_true(test: ast.expr) -> str | None:
    """Why this assert's test is true whatever happens, or None."""
    if isinstance(test, ast.Constant) and test.value:
        return "a truthy constant"
    if isinstance(test, ast.Tuple | ast.List | ast.Set) and test.elts:
        return "a non-empty literal"
    if isinstance(test, ast.Dict) and test.keys:
        return "a non-empty literal"
    if isinstance(test, ast.JoinedStr | ast.Lambda):
        return "an f-string or a lambda"
    if (
        isinstance(test, ast.Compare)
        and len(test.ops) == 1
        and isinstance(test.ops[0], ast.Eq | ast.Is | ast.LtE | ast.GtE)
        and ast.dump(test.left) == ast.dump(test.comparators[0])
    ):
        return "a value compared with itself"
    if (
        isinstance(test, ast.Call)
        and ast.unparse(test.func) == "isinstance"
        and len(test.args) == 2
        and ast.unparse(test.args[1]) == "object"
    ):
        return "isinstance(x, object)"
    return None


def _our_test_files() -> list[Path]:
    return [
        path
        for path in sorted(TESTS.rglob("*.py"))
        if not any(part.startswith(".") or part == "node" for part in path.parts)
    ]


def test_no_assert_is_always_true() -> None:
    found = []
    for path in _our_test_files():
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            if isinstance(node, ast.Assert) and (why := _always_true(node.test)):
                found.append(f"{path.relative_to(TESTS)}:{node.lineno}: {why}")
    assert found == []


def test_the_check_catches_each_kind() -> None:
    always = [
        'assert "the server answered"',
        "assert (answer.status, 200)",
        "assert [x]",
        "assert {'k': v}",
        "assert f'{x}'",
        "assert lambda: x",
        "assert x == x",
        "assert isinstance(x, object)",
    ]
    for line in always:
        statement = ast.parse(line).body[0]
        assert isinstance(statement, ast.Assert) and _always_true(statement.test), line
    for line in ("assert x", "assert x == y", "assert (x)", "assert isinstance(x, int)"):
        statement = ast.parse(line).body[0]
        assert isinstance(statement, ast.Assert) and _always_true(statement.test) is None, line
