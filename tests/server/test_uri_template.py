"""RFC 6570 URI templates: parsing, and matching URIs back to variables (the rows follow the
RFC's own examples, section 1.2 and 3.2)."""

from __future__ import annotations

from typing import Any

import pytest

from mcpkit.server.uri_template import UriTemplate, UriTemplateError, is_template


@pytest.mark.parametrize(
    "bad",
    ["{", "a}", "{}", "{a b}", "{=x}", "{!x}", "{a:0}", "{a:10000}", "{a*:3}", "{a,}", "{-x}"],
)
def test_malformed_templates_are_refused(bad: str) -> None:
    with pytest.raises(UriTemplateError):
        UriTemplate(bad)


def test_variables_and_identity() -> None:
    template = UriTemplate("db://{schema}/{table}{?limit,schema}")
    assert template.variables == ("schema", "table", "limit")
    assert template == UriTemplate("db://{schema}/{table}{?limit,schema}")
    assert str(template) == "db://{schema}/{table}{?limit,schema}"
    assert is_template("users://{id}") and not is_template("users://1")
    assert template.prefix == "db://"
    assert UriTemplate("{x}/y").prefix == "" and UriTemplate("a b{x}").prefix == "a%20b"


# -- matching ------------------------------------------------------------------------------------

# Each row: template, URI, variables expected back.
MATCHES: list[tuple[str, str, dict[str, Any]]] = [
    ("users://{id}/profile", "users://42/profile", {"id": "42"}),
    ("{hello}", "Hello%20World%21", {"hello": "Hello World!"}),
    (
        "{x,hello,y}",
        "1024,Hello%20World%21,768",
        {"x": "1024", "hello": "Hello World!", "y": "768"},
    ),
    ("?{x,empty}", "?1024,", {"x": "1024", "empty": ""}),
    ("?{x,undef}", "?1024", {"x": "1024"}),
    ("O{empty}X", "OX", {}),
    ("{+path}/here", "/foo/bar/here", {"path": "/foo/bar"}),
    ("{+base}index", "http://example.com/home/index", {"base": "http://example.com/home/"}),
    ("{+path,x}/here", "/foo/bar,1024/here", {"path": "/foo/bar", "x": "1024"}),
    ("file:///{+path}", "file:///a/b%20c.txt", {"path": "a/b c.txt"}),
    ("X{#hello}", "X#Hello%20World!", {"hello": "Hello World!"}),
    ("foo{#empty}", "foo#", {"empty": ""}),
    ("foo{#undef}", "foo", {}),
    ("{#path,x}/here", "#/foo/bar,1024/here", {"path": "/foo/bar", "x": "1024"}),
    ("X{.var}", "X.value", {"var": "value"}),
    ("X{.x,y}", "X.1024.768", {"x": "1024", "y": "768"}),
    ("www{.dom*}", "www.example.com", {"dom": ["example", "com"]}),
    ("X{.empty}", "X.", {"empty": ""}),
    ("X{.undef}", "X", {}),
    ("{/var}", "/value", {"var": "value"}),
    ("{/var,x}/here", "/value/1024/here", {"var": "value", "x": "1024"}),
    ("{/who,dub}", "/fred/me%2Ftoo", {"who": "fred", "dub": "me/too"}),
    ("{/var,empty}", "/value/", {"var": "value", "empty": ""}),
    ("{/list*}", "/red/green/blue", {"list": ["red", "green", "blue"]}),
    ("repo://{owner}{/path*}", "repo://me/src/a.py", {"owner": "me", "path": ["src", "a.py"]}),
    ("repo://{owner}{/path*}", "repo://me", {"owner": "me"}),
    ("{;x,y}", ";x=1024;y=768", {"x": "1024", "y": "768"}),
    ("{;x,y,empty}", ";x=1024;y=768;empty", {"x": "1024", "y": "768", "empty": ""}),
    ("{;list*}", ";list=red;list=green;list=blue", {"list": ["red", "green", "blue"]}),
    ("{?x,y}", "?x=1024&y=768", {"x": "1024", "y": "768"}),
    ("{?x,y}", "?y=768&x=1024", {"x": "1024", "y": "768"}),  # any order
    ("{?x,y}", "", {}),
    ("{?x,y,empty}", "?x=1024&y=768&empty=", {"x": "1024", "y": "768", "empty": ""}),
    ("{?list*}", "?list=red&list=green&list=blue", {"list": ["red", "green", "blue"]}),
    ("?fixed=yes{&x}", "?fixed=yes&x=1024", {"x": "1024"}),
    ("{&x,y,empty}", "&x=1024&y=768&empty=", {"x": "1024", "y": "768", "empty": ""}),
    ("search://{kind}{?q,limit}", "search://docs?limit=5", {"kind": "docs", "limit": "5"}),
    ("a{?x}{&y}", "a?x=1&y=2", {"x": "1", "y": "2"}),
    ("{var:3}", "val", {"var": "val"}),
    ("{name}{.ext}", "a.tar.gz", {"name": "a.tar", "ext": "gz"}),
    ("{name}{.ext}", "readme", {"name": "readme"}),
    ("{a}{;p}", "x;p=1", {"a": "x", "p": "1"}),
    ("{+path}{?v}", "a/b.c?v=2", {"path": "a/b.c", "v": "2"}),
]


@pytest.mark.parametrize(("template", "uri", "expected"), MATCHES)
def test_match_recovers_the_variables(template: str, uri: str, expected: dict[str, Any]) -> None:
    assert UriTemplate(template).match(uri) == expected


@pytest.mark.parametrize(
    ("template", "uri"),
    [
        ("users://{id}/profile", "users://42/settings"),
        ("users://{id}/profile", "users://a/b/profile"),  # a simple value stops at '/'
        ("users://{id}/profile", "users://42/profile?x=1"),
        ("users://{id}", "groups://42"),
        ("{/var}", "/a/b"),  # one segment for one variable
        ("{?x,y}", "?z=1"),  # a name the expression does not declare
        ("{?x}", "?x=1&x=2"),  # twice, and not exploded
        ("{x}", "%C0%AE"),  # not UTF-8
        ("{a}/{a}", "1/2"),  # one variable, two values
    ],
)
def test_match_refuses_what_does_not_fit(template: str, uri: str) -> None:
    assert UriTemplate(template).match(uri) is None


def test_lists_split_on_commas_before_decoding() -> None:
    template = UriTemplate("tags://{tags}{?sizes}")
    found = template.match("tags://a,b%2Cc,d?sizes=1,2", lists={"tags", "sizes"})
    assert found == {"tags": ["a", "b,c", "d"], "sizes": ["1", "2"]}
    assert template.match("tags://a,b%2Cc") == {"tags": "a,b,c"}  # not a list: one string
    assert UriTemplate("{x,list}").match("1,a,b", lists={"list"}) == {"x": "1", "list": ["a", "b"]}


@pytest.mark.parametrize(
    ("template", "uri", "values"),
    [
        ("users://{id}/profile", "users://a%20b%2F%C3%BC/profile", {"id": "a b/ü"}),
        ("files://{+path}", "files://dir/sub%20dir/%C3%BC.txt", {"path": "dir/sub dir/ü.txt"}),
        ("q://x{?a,b,c}", "q://x?a=1&b=x%26y%3Dz&c=", {"a": "1", "b": "x&y=z", "c": ""}),
        ("p://{;a,b}", "p://;a=1%3B2;b=3", {"a": "1;2", "b": "3"}),
        ("seg://{/parts*}", "seg:///a%20b/c%2Fd/e", {"parts": ["a b", "c/d", "e"]}),
        ("lbl://host{.parts*}", "lbl://host.a.b-c", {"parts": ["a", "b-c"]}),
        ("frag://x{#f}", "frag://x#a#b%20c", {"f": "a#b c"}),
    ],
)
def test_match_decodes_what_expansion_encodes(
    template: str, uri: str, values: dict[str, Any]
) -> None:
    # Each URI is what RFC 6570 expansion makes of `values`.
    assert UriTemplate(template).match(uri) == values
