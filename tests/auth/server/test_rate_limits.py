"""Rate limits at the authorization server (issue 22, item 19d): the three floods the attack
run sent in under two seconds -- 300 registrations, 300 wrong client secrets, 30 wrong
passwords -- meet 429 with Retry-After after the first few, with the default limits; the
right secret or password waits too while the limit holds, and goes through once the bucket
has refilled (the server's clock is the test's)."""

from __future__ import annotations

import re
from typing import Any

import httpx

from mcpkit.auth.server import Rate, RateLimits
from tests.clock import FakeClock

from .support import MACHINE_SECRET, Flow, Running, redirected_to, running

CALLBACK_DOCUMENT = {"redirect_uris": ["http://127.0.0.1:5173/callback"]}


def limited(response: httpx.Response) -> bool:
    """A 429 with a usable Retry-After (whole seconds, at least one)."""
    if response.status_code != 429:
        return False
    retry_after = response.headers["retry-after"]
    assert retry_after.isdigit() and int(retry_after) >= 1, retry_after
    return True


async def test_300_registrations_from_one_address_meet_429() -> None:
    clock = FakeClock(1_000_000.0)
    async with running(clock=clock) as run:
        answers = [await run.http.post("/register", json=CALLBACK_DOCUMENT) for _ in range(300)]
        created = [answer for answer in answers if answer.status_code == 201]
        assert len(created) == RateLimits().registrations_per_address.count  # type: ignore[union-attr]
        refused = answers[len(created) :]
        assert all(limited(answer) for answer in refused)
        assert refused[0].json()["error"] == "temporarily_unavailable"
        clock.now += 60  # the bucket refills over a minute
        assert (await run.http.post("/register", json=CALLBACK_DOCUMENT)).status_code == 201


async def machine_token(run: Running, secret: str) -> httpx.Response:
    form = {"grant_type": "client_credentials", "scope": "mcp"}
    return await run.http.post("/token", data=form, auth=("machine", secret))


async def test_300_wrong_client_secrets_meet_429_and_so_does_the_right_one() -> None:
    clock = FakeClock(1_000_000.0)
    async with running(clock=clock) as run:
        answers = [await machine_token(run, f"guess-{i}") for i in range(300)]
        failures = [answer for answer in answers if answer.status_code == 401]
        assert len(failures) == RateLimits().failed_client_auth_per_client.count  # type: ignore[union-attr]
        assert all(limited(answer) for answer in answers[len(failures) :])
        assert limited(await machine_token(run, MACHINE_SECRET))  # guessing is over for now
        clock.now += 60
        assert (await machine_token(run, MACHINE_SECRET)).status_code == 200


async def test_wrong_secrets_for_many_client_ids_are_limited_per_address() -> None:
    still = FakeClock(1_000_000.0)  # never advanced: no refill while the test runs
    async with running(clock=still) as run:
        form = {"grant_type": "client_credentials"}
        answers = [
            await run.http.post("/token", data=form, auth=(f"client-{i}", "guess"))
            for i in range(60)
        ]
        failures = [answer for answer in answers if answer.status_code == 401]
        assert len(failures) == RateLimits().failed_client_auth_per_address.count  # type: ignore[union-attr]
        assert all(limited(answer) for answer in answers[len(failures) :])


def hidden_fields(page: str) -> dict[str, str]:
    return dict(re.findall(r'type="hidden" name="([^"]+)" value="([^"]*)"', page))


async def sign_in(run: Running, fields: dict[str, str], password: str) -> httpx.Response:
    form = {**fields, "username": "alice", "password": password, "decision": "approve"}
    return await run.http.post("/authorize", data=form)


async def test_30_wrong_passwords_meet_429_and_so_does_the_right_one() -> None:
    clock = FakeClock(1_000_000.0)
    async with running(dev_approve=False, clock=clock) as run:
        page = await run.http.get("/authorize", params=Flow().query())
        fields = hidden_fields(page.text)
        answers = [await sign_in(run, fields, f"guess-{i}") for i in range(30)]
        wrong = [answer for answer in answers if answer.status_code == 200]
        assert len(wrong) == RateLimits().failed_sign_ins_per_user.count  # type: ignore[union-attr]
        assert all("Wrong username or password" in answer.text for answer in wrong)
        refused = answers[len(wrong) :]
        assert all(limited(answer) for answer in refused)
        assert "too many failed sign-ins" in refused[0].text
        assert limited(await sign_in(run, fields, "wonderland"))
        clock.now += 60  # two attempts back (10 per 5 minutes)
        _, params = redirected_to(await sign_in(run, fields, "wonderland"))
        assert "code" in params


async def test_limits_are_configurable_and_can_be_switched_off() -> None:
    limits: dict[str, Any] = {
        "rate_limits": RateLimits(registrations_per_address=Rate(2, 3600.0)),
    }
    async with running(**limits) as run:
        statuses = [
            (await run.http.post("/register", json=CALLBACK_DOCUMENT)).status_code for _ in range(3)
        ]
        assert statuses == [201, 201, 429]
    async with running(rate_limits=RateLimits(registrations_per_address=None)) as run:
        for _ in range(40):
            assert (await run.http.post("/register", json=CALLBACK_DOCUMENT)).status_code == 201
