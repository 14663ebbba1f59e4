"""The consent form against the attacks of issue 22 item 19: a CSRF cookie planted in the
victim's browser (on loopback http every port shares cookies and is the same site), a post
from another origin, and one form answered twice for two codes."""

from __future__ import annotations

import asyncio
import re

import httpx
import pytest

from .support import Flow, redirected_to, running

LOGIN = {"username": "alice", "password": "wonderland", "decision": "approve"}
COOKIE = "mcpkit-csrf"  # the name over http (`__Host-mcpkit-csrf` over https)


def hidden_fields(page: str) -> dict[str, str]:
    return dict(re.findall(r'type="hidden" name="([^"]+)" value="([^"]*)"', page))


async def test_a_csrf_cookie_the_server_did_not_issue_is_ignored() -> None:
    planted = "A" * 43  # any 43 characters used to pass for a cookie
    async with running(dev_approve=False) as run:
        flow = Flow()
        # The attacker shows the page to itself with the value it will plant ...
        async with httpx.AsyncClient(base_url=run.url, cookies={COOKIE: planted}) as attacker:
            page = await attacker.get("/authorize", params=flow.query())
            assert page.status_code == 200
            issued = page.headers["set-cookie"].split(";", 1)[0]
            assert issued.startswith(f"{COOKIE}=") and issued != f"{COOKIE}={planted}"
        # ... and the victim's browser, with the planted cookie, posts the attacker's form.
        async with httpx.AsyncClient(base_url=run.url, cookies={COOKIE: planted}) as victim:
            posted = await victim.post("/authorize", data={**hidden_fields(page.text), **LOGIN})
            assert posted.status_code == 403, posted.headers.get("location")
            assert "location" not in posted.headers


@pytest.mark.parametrize(
    "headers",
    [
        {"origin": "http://127.0.0.1:5173"},  # another port of the same loopback host
        {"origin": "null", "sec-fetch-site": "cross-site"},
        {"sec-fetch-site": "same-site"},
        {"sec-fetch-site": "cross-site"},
    ],
)
async def test_a_post_from_another_origin_is_refused(headers: dict[str, str]) -> None:
    async with running(dev_approve=False) as run:
        page = await run.http.get("/authorize", params=Flow().query())
        form = {**hidden_fields(page.text), **LOGIN}
        refused = await run.http.post("/authorize", data=form, headers=headers)
        assert refused.status_code == 403 and "location" not in refused.headers
        # The same form from this server's own page goes through.
        own = {"origin": run.url, "sec-fetch-site": "same-origin"}
        assert (await run.http.post("/authorize", data=form, headers=own)).status_code == 303


async def test_a_form_is_answered_once() -> None:
    async with running(dev_approve=False) as run:
        page = await run.http.get("/authorize", params=Flow().query())
        form = {**hidden_fields(page.text), **LOGIN}
        first = await run.http.post("/authorize", data=form)
        _, params = redirected_to(first)
        assert "code" in params
        again = await run.http.post("/authorize", data=form)
        assert again.status_code == 403 and "location" not in again.headers
        assert "answered already" in again.text
        denied = await run.http.post("/authorize", data={**form, "decision": "deny"})
        assert denied.status_code == 403


async def test_two_posts_of_one_form_at_once_get_one_code() -> None:
    async with running(dev_approve=False) as run:
        page = await run.http.get("/authorize", params=Flow().query())
        form = {**hidden_fields(page.text), **LOGIN}
        answers = await asyncio.gather(*(run.http.post("/authorize", data=form) for _ in range(4)))
        assert sorted(answer.status_code for answer in answers) == [303, 403, 403, 403]
