"""ResponseCache follows the 2026-07-28 caching rules (server/utilities/caching)."""

from __future__ import annotations

from typing import Any

import pytest

from mcpkit.client.cache import ResponseCache
from mcpkit.protocol.per_request import CACHEABLE_METHODS


def ok(ttl: Any = 60_000, scope: str | None = "public", **extra: Any) -> dict[str, Any]:
    result: dict[str, Any] = {"resultType": "complete", **extra}
    if ttl is not None:
        result["ttlMs"] = ttl
    if scope is not None:
        result["cacheScope"] = scope
    return result


# --- what gets stored -----------------------------------------------------------------------


@pytest.mark.parametrize("method", sorted(CACHEABLE_METHODS))
def test_every_cacheable_method_is_stored_and_served(method: str) -> None:
    cache = ResponseCache()
    params = {"uri": "file:///a"} if method == "resources/read" else None
    result = ok(items=[1])
    cache.put(method, params, result, now=0.0)
    assert cache.get(method, params, now=1.0) == result
    assert len(cache) == 1


@pytest.mark.parametrize("method", ["tools/call", "prompts/get", "completion/complete", "ping"])
def test_other_methods_are_never_cached(method: str) -> None:
    cache = ResponseCache()
    cache.put(method, {"name": "x"}, ok(), now=0.0)
    assert len(cache) == 0
    assert cache.get(method, {"name": "x"}, now=0.0) is None


def test_absent_result_type_counts_as_complete() -> None:
    cache = ResponseCache()
    result = {"tools": [], "ttlMs": 1000, "cacheScope": "public"}
    cache.put("tools/list", None, result, now=0.0)
    assert cache.get("tools/list", None, now=0.5) == result


@pytest.mark.parametrize("result_type", ["input_required", "incomplete", None])
def test_non_complete_results_are_never_cached(result_type: str | None) -> None:
    cache = ResponseCache()
    result = ok()
    result["resultType"] = result_type
    cache.put("resources/read", {"uri": "file:///a"}, result, now=0.0)
    assert len(cache) == 0


def test_input_required_does_not_drop_a_fresh_complete_entry() -> None:
    cache = ResponseCache()
    params = {"uri": "file:///a"}
    cache.put("resources/read", params, ok(contents=[1]), now=0.0)
    cache.put("resources/read", params, {"resultType": "input_required"}, now=1.0)
    assert cache.get("resources/read", params, now=2.0) == ok(contents=[1])


@pytest.mark.parametrize(
    "retry",
    [
        {"inputResponses": {"a": {"action": "accept"}}},
        {"requestState": "opaque"},
        {"inputResponses": {}, "requestState": ""},
    ],
)
def test_mrtr_retries_are_never_cached(retry: dict[str, Any]) -> None:
    cache = ResponseCache()
    params = {"uri": "file:///a", **retry}
    cache.put("resources/read", params, ok(), now=0.0)
    assert len(cache) == 0
    assert cache.get("resources/read", params, now=0.0) is None
    # ...and the retry's answer is not served for the plain request either.
    assert cache.get("resources/read", {"uri": "file:///a"}, now=0.0) is None


# --- TTL ------------------------------------------------------------------------------------


def test_fresh_strictly_before_ttl_expires() -> None:
    cache = ResponseCache()
    cache.put("tools/list", None, ok(ttl=1500), now=100.0)
    assert cache.get("tools/list", None, now=100.0) is not None
    assert cache.get("tools/list", None, now=101.499) is not None
    assert cache.get("tools/list", None, now=101.5) is None  # now < t + ttl, not <=


def test_stale_entries_are_dropped_on_lookup() -> None:
    cache = ResponseCache()
    cache.put("tools/list", None, ok(ttl=1000), now=0.0)
    assert cache.get("tools/list", None, now=5.0) is None
    assert len(cache) == 0


def test_float_ttl_is_accepted() -> None:
    cache = ResponseCache()
    cache.put("tools/list", None, ok(ttl=250.5), now=0.0)
    assert cache.get("tools/list", None, now=0.25) is not None
    assert cache.get("tools/list", None, now=0.2505) is None


@pytest.mark.parametrize(
    "ttl", [None, 0, 0.0, -1, -5000, "60000", True, [1], {}, float("nan"), float("inf")]
)
def test_unusable_ttl_means_immediately_stale(ttl: Any) -> None:
    cache = ResponseCache()
    cache.put("tools/list", None, ok(ttl=ttl), now=0.0)
    assert len(cache) == 0
    assert cache.get("tools/list", None, now=0.0) is None


def test_newer_immediately_stale_answer_drops_the_old_entry() -> None:
    cache = ResponseCache()
    cache.put("tools/list", None, ok(ttl=60_000, tools=["old"]), now=0.0)
    cache.put("tools/list", None, ok(ttl=0, tools=["new"]), now=1.0)
    assert cache.get("tools/list", None, now=2.0) is None


def test_newer_put_replaces_older_and_restarts_the_clock() -> None:
    cache = ResponseCache()
    cache.put("tools/list", None, ok(ttl=1000, tools=["a"]), now=0.0)
    cache.put("tools/list", None, ok(ttl=1000, tools=["b"]), now=0.9)
    assert cache.get("tools/list", None, now=1.5) == ok(ttl=1000, tools=["b"])
    assert len(cache) == 1


# --- keys -----------------------------------------------------------------------------------


def test_each_page_is_cached_by_its_cursor_with_its_own_clock() -> None:
    cache = ResponseCache()
    page1 = ok(ttl=10_000, tools=["a"], nextCursor="c2")
    page2 = ok(ttl=1_000, tools=["b"])
    cache.put("tools/list", None, page1, now=0.0)
    cache.put("tools/list", {"cursor": "c2"}, page2, now=5.0)
    assert cache.get("tools/list", None, now=5.5) == page1
    assert cache.get("tools/list", {"cursor": "c2"}, now=5.5) == page2
    assert cache.get("tools/list", {"cursor": "c3"}, now=5.5) is None
    # Page 2's shorter TTL ran out; page 1 is still fresh.
    assert cache.get("tools/list", {"cursor": "c2"}, now=6.0) is None
    assert cache.get("tools/list", None, now=6.0) == page1


def test_different_params_or_method_never_match() -> None:
    cache = ResponseCache()
    cache.put("resources/read", {"uri": "file:///a"}, ok(), now=0.0)
    assert cache.get("resources/read", {"uri": "file:///b"}, now=0.0) is None
    assert cache.get("resources/read", {"uri": "file:///a", "x": 1}, now=0.0) is None
    assert cache.get("resources/list", {"uri": "file:///a"}, now=0.0) is None
    assert cache.get("resources/read", {"uri": "file:///a"}, now=0.0) is not None


def test_meta_is_ignored_in_keys() -> None:
    cache = ResponseCache()
    cache.put(
        "tools/list",
        {"cursor": "c", "_meta": {"progressToken": 1, "traceparent": "x"}},
        ok(),
        now=0.0,
    )
    assert cache.get("tools/list", {"cursor": "c"}, now=0.0) is not None
    assert cache.get("tools/list", {"cursor": "c", "_meta": {"progressToken": 2}}, now=0.0)
    assert cache.get("tools/list", {"_meta": {}}, now=0.0) is None


def test_none_empty_and_meta_only_params_are_the_same_request() -> None:
    cache = ResponseCache()
    cache.put("server/discover", {"_meta": {"a": 1}}, ok(), now=0.0)
    assert cache.get("server/discover", None, now=0.0) is not None
    assert cache.get("server/discover", {}, now=0.0) is not None


def test_key_order_does_not_matter() -> None:
    cache = ResponseCache()
    cache.put("resources/read", {"uri": "u", "opts": {"b": 1, "a": 2}}, ok(), now=0.0)
    assert cache.get("resources/read", {"opts": {"a": 2, "b": 1}, "uri": "u"}, now=0.0)


def test_unserialisable_params_are_not_cached() -> None:
    cache = ResponseCache()
    params = {"cursor": object()}
    cache.put("tools/list", params, ok(), now=0.0)
    assert len(cache) == 0
    assert cache.get("tools/list", params, now=0.0) is None


def test_results_are_copied_in_and_out() -> None:
    cache = ResponseCache()
    result = ok(tools=[{"name": "a"}])
    cache.put("tools/list", None, result, now=0.0)
    result["tools"].append({"name": "mutated"})
    got = cache.get("tools/list", None, now=0.0)
    assert got == ok(tools=[{"name": "a"}])
    assert got is not None
    got["tools"].clear()
    assert cache.get("tools/list", None, now=0.0) == ok(tools=[{"name": "a"}])


# --- scope ----------------------------------------------------------------------------------


def test_private_entries_serve_only_their_auth_context() -> None:
    cache = ResponseCache()
    cache.put("resources/read", {"uri": "u"}, ok(scope="private", who="alice"), now=0.0, auth="A")
    assert cache.get("resources/read", {"uri": "u"}, now=0.0, auth="A") is not None
    assert cache.get("resources/read", {"uri": "u"}, now=0.0, auth="B") is None
    assert cache.get("resources/read", {"uri": "u"}, now=0.0) is None


def test_private_anonymous_entries_do_not_serve_authenticated_callers() -> None:
    cache = ResponseCache()
    cache.put("tools/list", None, ok(scope="private"), now=0.0)
    assert cache.get("tools/list", None, now=0.0) is not None
    assert cache.get("tools/list", None, now=0.0, auth="A") is None


def test_public_entries_serve_every_auth_context() -> None:
    cache = ResponseCache()
    cache.put("tools/list", None, ok(scope="public"), now=0.0, auth="A")
    for auth in ("A", "B", None):
        assert cache.get("tools/list", None, now=0.0, auth=auth) is not None


@pytest.mark.parametrize("scope", [None, "shared", "PUBLIC", 1])
def test_missing_or_unknown_scope_is_private(scope: Any) -> None:
    cache = ResponseCache()
    result = ok(scope=None)
    if scope is not None:
        result["cacheScope"] = scope
    cache.put("tools/list", None, result, now=0.0, auth="A")
    assert cache.get("tools/list", None, now=0.0, auth="A") is not None
    assert cache.get("tools/list", None, now=0.0, auth="B") is None


def test_each_auth_context_keeps_its_own_private_entry() -> None:
    cache = ResponseCache()
    cache.put("resources/read", {"uri": "u"}, ok(scope="private", who="a"), now=0.0, auth="A")
    cache.put("resources/read", {"uri": "u"}, ok(scope="private", who="b"), now=0.0, auth="B")
    assert len(cache) == 2
    a = cache.get("resources/read", {"uri": "u"}, now=0.0, auth="A")
    b = cache.get("resources/read", {"uri": "u"}, now=0.0, auth="B")
    assert a is not None and a["who"] == "a"
    assert b is not None and b["who"] == "b"


def test_newer_of_public_and_own_private_entry_wins() -> None:
    cache = ResponseCache()
    cache.put("tools/list", None, ok(scope="public", v=1), now=0.0, auth="A")
    cache.put("tools/list", None, ok(scope="private", v=2), now=1.0, auth="A")
    got = cache.get("tools/list", None, now=2.0, auth="A")
    assert got is not None and got["v"] == 2
    other = cache.get("tools/list", None, now=2.0, auth="B")
    assert other is not None and other["v"] == 1
    cache.put("tools/list", None, ok(scope="public", v=3), now=3.0, auth="A")
    got = cache.get("tools/list", None, now=4.0, auth="A")
    assert got is not None and got["v"] == 3


def test_stale_answer_drops_only_what_this_context_sees() -> None:
    cache = ResponseCache()
    cache.put("tools/list", None, ok(scope="private", v="a"), now=0.0, auth="A")
    cache.put("tools/list", None, ok(scope="private", v="b"), now=0.0, auth="B")
    cache.put("tools/list", None, ok(ttl=0), now=1.0, auth="A")
    assert cache.get("tools/list", None, now=1.0, auth="A") is None
    assert cache.get("tools/list", None, now=1.0, auth="B") is not None


# --- invalidation ---------------------------------------------------------------------------


def _filled() -> ResponseCache:
    cache = ResponseCache()
    cache.put("server/discover", None, ok(), now=0.0)
    cache.put("tools/list", None, ok(), now=0.0)
    cache.put("tools/list", {"cursor": "2"}, ok(), now=0.0)
    cache.put("tools/list", None, ok(scope="private"), now=0.0, auth="A")
    cache.put("prompts/list", None, ok(), now=0.0)
    cache.put("resources/list", None, ok(), now=0.0)
    cache.put("resources/list", {"cursor": "2"}, ok(), now=0.0)
    cache.put("resources/templates/list", None, ok(), now=0.0)
    cache.put("resources/read", {"uri": "file:///a"}, ok(), now=0.0)
    cache.put("resources/read", {"uri": "file:///a"}, ok(scope="private"), now=0.0, auth="A")
    cache.put("resources/read", {"uri": "file:///b"}, ok(), now=0.0)
    assert len(cache) == 11
    return cache


def _methods(cache: ResponseCache) -> set[str]:
    present = set()
    for method in CACHEABLE_METHODS:
        for params in (None, {"cursor": "2"}, {"uri": "file:///a"}, {"uri": "file:///b"}):
            for auth in (None, "A"):
                if cache.get(method, params, now=0.0, auth=auth) is not None:
                    present.add(method)
    return present


def test_tools_list_changed_drops_every_tools_list_page() -> None:
    cache = _filled()
    assert cache.invalidate("notifications/tools/list_changed") == 3
    assert "tools/list" not in _methods(cache)
    assert len(cache) == 8


def test_prompts_list_changed_drops_prompts_list() -> None:
    cache = _filled()
    assert cache.invalidate("notifications/prompts/list_changed") == 1
    assert _methods(cache) == CACHEABLE_METHODS - {"prompts/list"}


def test_resources_list_changed_drops_lists_and_templates_not_reads() -> None:
    cache = _filled()
    assert cache.invalidate("notifications/resources/list_changed") == 3
    assert _methods(cache) == CACHEABLE_METHODS - {"resources/list", "resources/templates/list"}
    assert cache.get("resources/read", {"uri": "file:///a"}, now=0.0) is not None


def test_resources_updated_drops_reads_of_that_uri_only() -> None:
    cache = _filled()
    assert cache.invalidate("notifications/resources/updated", {"uri": "file:///a"}) == 2
    assert cache.get("resources/read", {"uri": "file:///a"}, now=0.0) is None
    assert cache.get("resources/read", {"uri": "file:///a"}, now=0.0, auth="A") is None
    assert cache.get("resources/read", {"uri": "file:///b"}, now=0.0) is not None
    assert len(cache) == 9


@pytest.mark.parametrize(
    ("method", "params"),
    [
        ("notifications/resources/updated", None),
        ("notifications/resources/updated", {}),
        ("notifications/resources/updated", {"uri": 5}),
        ("notifications/resources/updated", {"uri": "file:///zzz"}),
        ("notifications/message", {"level": "info"}),
        ("notifications/progress", None),
    ],
)
def test_irrelevant_notifications_drop_nothing(method: str, params: Any) -> None:
    cache = _filled()
    assert cache.invalidate(method, params) == 0
    assert len(cache) == 11


def test_clear_forgets_everything() -> None:
    cache = _filled()
    cache.clear()
    assert len(cache) == 0
    assert cache.get("server/discover", None, now=0.0) is None


# --- bounds ---------------------------------------------------------------------------------


def test_eviction_drops_least_recently_used() -> None:
    cache = ResponseCache(max_entries=2)
    cache.put("tools/list", {"cursor": "1"}, ok(), now=0.0)
    cache.put("tools/list", {"cursor": "2"}, ok(), now=0.0)
    assert cache.get("tools/list", {"cursor": "1"}, now=0.0) is not None  # 1 is now newest
    cache.put("tools/list", {"cursor": "3"}, ok(), now=0.0)
    assert len(cache) == 2
    assert cache.get("tools/list", {"cursor": "2"}, now=0.0) is None
    assert cache.get("tools/list", {"cursor": "1"}, now=0.0) is not None
    assert cache.get("tools/list", {"cursor": "3"}, now=0.0) is not None


def test_never_grows_past_max_entries() -> None:
    cache = ResponseCache(max_entries=5)
    for i in range(50):
        cache.put("resources/read", {"uri": f"u{i}"}, ok(), now=float(i))
    assert len(cache) == 5
    assert cache.get("resources/read", {"uri": "u49"}, now=49.0) is not None
    assert cache.get("resources/read", {"uri": "u44"}, now=49.0) is None


def test_replacing_an_entry_does_not_evict() -> None:
    cache = ResponseCache(max_entries=2)
    cache.put("tools/list", None, ok(), now=0.0)
    cache.put("prompts/list", None, ok(), now=0.0)
    cache.put("tools/list", None, ok(), now=1.0)
    assert len(cache) == 2
    assert cache.get("prompts/list", None, now=1.0) is not None


@pytest.mark.parametrize("bad", [0, -1])
def test_max_entries_must_be_positive(bad: int) -> None:
    with pytest.raises(ValueError, match="max_entries"):
        ResponseCache(max_entries=bad)
