"""A real redis-server for the stores' tests that run each contract against both twins."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.peers import redis_server


@pytest.fixture(scope="package")
def redis_url() -> Iterator[str]:
    with redis_server() as url:
        yield url
