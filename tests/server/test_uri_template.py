"""RFC 6570 URI templates: expansion against the RFC's own examples, and matching back."""

from __future__ import annotations

from typing import Any

import pytest

from mcpkit.server.uri_template import UriTemplate, UriTemplateError, is_template

# The variables of RFC 6570 section 3.2.1 (and section 1.2, which uses a subset).
RFC_VARIABLES: dict[str, Any] = {
    "count": ["one", "two", "three"],
    "dom": ["example", "com"],
    "dub": "me/too",
    "hello": "Hello World!",
    "half": "50%",
    "var": "value",
    "who": "fred",
    "base": "http://example.com/home/",
    "path": "/foo/bar",
    "list": ["red", "green", "blue"],
    "keys": {"semi": ";", "dot": ".", "comma": ","},
    "v": "6",
    "x": "1024",
    "y": "768",
    "empty": "",
    "empty_keys": {},
    "undef": None,
}

# Section 1.2, levels 1 to 4.
LEVELS = [
    # Level 1
    ("{var}", "value"),
    ("{hello}", "Hello%20World%21"),
    # Level 2
    ("{+var}", "value"),
    ("{+hello}", "Hello%20World!"),
    ("{+path}/here", "/foo/bar/here"),
    ("here?ref={+path}", "here?ref=/foo/bar"),
    ("X{#var}", "X#value"),
    ("X{#hello}", "X#Hello%20World!"),
    # Level 3
    ("map?{x,y}", "map?1024,768"),
    ("{x,hello,y}", "1024,Hello%20World%21,768"),
    ("{+x,hello,y}", "1024,Hello%20World!,768"),
    ("{+path,x}/here", "/foo/bar,1024/here"),
    ("{#x,hello,y}", "#1024,Hello%20World!,768"),
    ("{#path,x}/here", "#/foo/bar,1024/here"),
    ("X{.var}", "X.value"),
    ("X{.x,y}", "X.1024.768"),
    ("{/var}", "/value"),
    ("{/var,x}/here", "/value/1024/here"),
    ("{;x,y}", ";x=1024;y=768"),
    ("{;x,y,empty}", ";x=1024;y=768;empty"),
    ("{?x,y}", "?x=1024&y=768"),
    ("{?x,y,empty}", "?x=1024&y=768&empty="),
    ("?fixed=yes{&x}", "?fixed=yes&x=1024"),
    ("{&x,y,empty}", "&x=1024&y=768&empty="),
    # Level 4
    ("{var:3}", "val"),
    ("{var:30}", "value"),
    ("{list}", "red,green,blue"),
    ("{list*}", "red,green,blue"),
    ("{keys}", "semi,%3B,dot,.,comma,%2C"),
    ("{keys*}", "semi=%3B,dot=.,comma=%2C"),
    ("{+path:6}/here", "/foo/b/here"),
    ("{+list}", "red,green,blue"),
    ("{+list*}", "red,green,blue"),
    ("{+keys}", "semi,;,dot,.,comma,,"),
    ("{+keys*}", "semi=;,dot=.,comma=,"),
    ("{#path:6}/here", "#/foo/b/here"),
    ("{#list}", "#red,green,blue"),
    ("{#list*}", "#red,green,blue"),
    ("{#keys}", "#semi,;,dot,.,comma,,"),
    ("{#keys*}", "#semi=;,dot=.,comma=,"),
    ("X{.var:3}", "X.val"),
    ("X{.list}", "X.red,green,blue"),
    ("X{.list*}", "X.red.green.blue"),
    ("X{.keys}", "X.semi,%3B,dot,.,comma,%2C"),
    ("X{.keys*}", "X.semi=%3B.dot=..comma=%2C"),
    ("{/var:1,var}", "/v/value"),
    ("{/list}", "/red,green,blue"),
    ("{/list*}", "/red/green/blue"),
    ("{/list*,path:4}", "/red/green/blue/%2Ffoo"),
    ("{/keys}", "/semi,%3B,dot,.,comma,%2C"),
    ("{/keys*}", "/semi=%3B/dot=./comma=%2C"),
    ("{;hello:5}", ";hello=Hello"),
    ("{;list}", ";list=red,green,blue"),
    ("{;list*}", ";list=red;list=green;list=blue"),
    ("{;keys}", ";keys=semi,%3B,dot,.,comma,%2C"),
    ("{;keys*}", ";semi=%3B;dot=.;comma=%2C"),
    ("{?var:3}", "?var=val"),
    ("{?list}", "?list=red,green,blue"),
    ("{?list*}", "?list=red&list=green&list=blue"),
    ("{?keys}", "?keys=semi,%3B,dot,.,comma,%2C"),
    ("{?keys*}", "?semi=%3B&dot=.&comma=%2C"),
    ("{&var:3}", "&var=val"),
    ("{&list}", "&list=red,green,blue"),
    ("{&list*}", "&list=red&list=green&list=blue"),
    ("{&keys}", "&keys=semi,%3B,dot,.,comma,%2C"),
    ("{&keys*}", "&semi=%3B&dot=.&comma=%2C"),
]

# Section 3.2.2 to 3.2.9: the operator-by-operator tables (beyond what LEVELS covers).
OPERATORS = [
    ("{half}", "50%25"),
    ("O{empty}X", "OX"),
    ("O{undef}X", "OX"),
    ("?{x,empty}", "?1024,"),
    ("?{x,undef}", "?1024"),
    ("?{undef,y}", "?768"),
    ("{+half}", "50%25"),
    ("{base}index", "http%3A%2F%2Fexample.com%2Fhome%2Findex"),
    ("{+base}index", "http://example.com/home/index"),
    ("O{+empty}X", "OX"),
    ("O{+undef}X", "OX"),
    ("up{+path}{var}/here", "up/foo/barvalue/here"),
    ("{#half}", "#50%25"),
    ("foo{#empty}", "foo#"),
    ("foo{#undef}", "foo"),
    ("{.who}", ".fred"),
    ("{.who,who}", ".fred.fred"),
    ("{.half,who}", ".50%25.fred"),
    ("www{.dom*}", "www.example.com"),
    ("X{.empty}", "X."),
    ("X{.undef}", "X"),
    ("X{.empty_keys}", "X"),
    ("X{.empty_keys*}", "X"),
    ("{/who}", "/fred"),
    ("{/who,who}", "/fred/fred"),
    ("{/half,who}", "/50%25/fred"),
    ("{/who,dub}", "/fred/me%2Ftoo"),
    ("{/var,empty}", "/value/"),
    ("{/var,undef}", "/value"),
    ("{;who}", ";who=fred"),
    ("{;half}", ";half=50%25"),
    ("{;empty}", ";empty"),
    ("{;v,empty,who}", ";v=6;empty;who=fred"),
    ("{;v,bar,who}", ";v=6;who=fred"),
    ("{;x,y,undef}", ";x=1024;y=768"),
    ("{?who}", "?who=fred"),
    ("{?half}", "?half=50%25"),
    ("{?x,y,undef}", "?x=1024&y=768"),
    ("{&who}", "&who=fred"),
    ("{&half}", "&half=50%25"),
]


@pytest.mark.parametrize(("template", "expected"), LEVELS + OPERATORS)
def test_expansion_matches_the_rfc_examples(template: str, expected: str) -> None:
    assert UriTemplate(template).expand(RFC_VARIABLES) == expected


def test_expansion_takes_keywords_numbers_and_unicode() -> None:
    template = UriTemplate("users://{id}/posts{?page,draft}")
    assert template.expand(id=7, page=2, draft=False) == "users://7/posts?page=2&draft=false"
    assert UriTemplate("{name}").expand(name="Dürst") == "D%C3%BCrst"
    assert UriTemplate("{name:2}").expand(name="Dürst") == "D%C3%BC"  # prefixes count characters
    assert UriTemplate("{+p}").expand(p="%41%zz") == "%41%25zz"  # triplets kept, stray % encoded


@pytest.mark.parametrize(
    "bad",
    ["{", "a}", "{}", "{a b}", "{=x}", "{!x}", "{a:0}", "{a:10000}", "{a*:3}", "{a,}", "{-x}"],
)
def test_malformed_templates_are_refused(bad: str) -> None:
    with pytest.raises(UriTemplateError):
        UriTemplate(bad)


def test_a_prefix_on_a_list_cannot_expand() -> None:
    with pytest.raises(UriTemplateError):
        UriTemplate("{list:2}").expand(list=["a", "b"])


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
    ("template", "values"),
    [
        ("users://{id}/profile", {"id": "a b/ü"}),
        ("files://{+path}", {"path": "dir/sub dir/ü.txt"}),
        ("q://x{?a,b,c}", {"a": "1", "b": "x&y=z", "c": ""}),
        ("p://{;a,b}", {"a": "1;2", "b": "3"}),
        ("seg://{/parts*}", {"parts": ["a b", "c/d", "e"]}),
        ("lbl://host{.parts*}", {"parts": ["a", "b-c"]}),
        ("frag://x{#f}", {"f": "a#b c"}),
    ],
)
def test_match_inverts_expand(template: str, values: dict[str, Any]) -> None:
    parsed = UriTemplate(template)
    assert parsed.match(parsed.expand(values)) == values
