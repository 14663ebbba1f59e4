"""The fuzzers' budget: FUZZ_EXAMPLES examples per fuzzer and era (40 in every test run, a few
seconds each; `scripts/fuzz.sh --minutes N` runs thousands with fresh seeds until the time is
up)."""

from __future__ import annotations

import os

from hypothesis import HealthCheck, settings

FUZZ = settings(
    max_examples=int(os.environ.get("FUZZ_EXAMPLES", "40")),
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
