"""The eras are named by mechanism (issue 23): "handshake" and "per-request", everywhere a user
meets them (`Client(mode=...)`, `client.era`, `mcpkit.testing.connect(era=...)`, the host's
HTTP+SSE servers). The old "legacy" / "modern" keep working for one release, each use with a
DeprecationWarning attributed to the caller's own line.
"""

from __future__ import annotations

import warnings

import pytest

import mcpkit
from mcpkit import Client, Era, Server
from mcpkit.client import era as era_module
from mcpkit.host.config import load_config
from mcpkit.testing import connect


def demo() -> Server:
    server = Server("names")

    @server.tool()
    def add(a: int, b: int) -> int:
        return a + b

    return server


@pytest.fixture(autouse=True)
def fresh_era_cache() -> None:
    era_module.ERAS.clear()


def test_era_is_a_public_str_enum_named_by_mechanism() -> None:
    assert mcpkit.Era is Era
    assert [e.value for e in Era] == ["handshake", "per-request"]
    assert str(Era.PER_REQUEST) == f"{Era.PER_REQUEST}" == "per-request"
    assert {Era.HANDSHAKE: 1}["handshake"] == 1  # hashes as its value


async def test_new_mode_names_choose_the_era() -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no deprecation on the new spellings
        async with Client(demo(), mode="handshake") as client:
            assert client.era is Era.HANDSHAKE
            assert client.era == "handshake"
            assert client.protocol_version == "2025-11-25"
        async with Client(demo(), mode="per-request") as client:
            assert client.era is Era.PER_REQUEST
            assert client.era == "per-request"
            assert client.protocol_version == "2026-07-28"
            assert (await client.call_tool("add", {"a": 1, "b": 2})).structured_content == {
                "result": 3
            }
        async with Client(demo(), mode=Era.PER_REQUEST) as client:
            assert client.era is Era.PER_REQUEST


async def test_old_mode_name_still_works_and_warns_at_the_callers_line() -> None:
    with pytest.warns(DeprecationWarning, match="'legacy' is deprecated; use 'handshake'") as seen:
        client = Client(demo(), mode="legacy")
    assert seen[0].filename == __file__
    async with client:
        assert client.era is Era.HANDSHAKE


async def test_comparing_client_era_with_an_old_name_still_answers_and_warns() -> None:
    async with Client(demo(), mode="2026-07-28") as client:
        with pytest.warns(DeprecationWarning, match="'modern' is deprecated; use 'per-request'"):
            assert client.era == "modern"
        with pytest.warns(DeprecationWarning, match="'legacy' is deprecated"):
            assert client.era != "legacy"
    async with Client(demo()) as client:  # in process: the handshake by default
        with pytest.warns(DeprecationWarning) as seen:
            assert client.era == "legacy"
        assert seen[0].filename == __file__


async def test_testing_connect_takes_the_new_names_and_the_old_one_with_a_warning() -> None:
    async with connect(demo(), era="per-request") as client:
        assert client.era is Era.PER_REQUEST
    async with connect(demo(), era="handshake") as client:
        assert client.era is Era.HANDSHAKE
    with pytest.warns(DeprecationWarning, match="'legacy' is deprecated") as seen:
        async with connect(demo(), era="legacy") as client:
            assert client.era is Era.HANDSHAKE
    assert seen[0].filename == __file__


def test_unknown_names_are_refused_with_the_choices() -> None:
    with pytest.raises(ValueError, match="auto, handshake, per-request, 2026-07-28"):
        Client(demo(), mode="stateless")
    with pytest.raises(ValueError):
        era_module.era_named("stateless")


def test_an_http_sse_server_in_a_host_config_pins_the_handshake_era() -> None:
    config = load_config({"mcpServers": {"old": {"url": "https://example.com/sse"}}})
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert config.servers["old"].client_options()["mode"] == Era.HANDSHAKE


def test_the_per_request_versions_are_named_by_era_and_the_old_name_warns() -> None:
    import mcpkit.types as types
    from mcpkit.types import versions

    assert types.PER_REQUEST_VERSIONS == versions.PER_REQUEST_VERSIONS == ("2026-07-28",)
    with pytest.warns(DeprecationWarning, match="use PER_REQUEST_VERSIONS") as seen:
        assert types.MODERN_VERSIONS == types.PER_REQUEST_VERSIONS
    assert seen[0].filename == __file__
    with pytest.warns(DeprecationWarning, match="use PER_REQUEST_VERSIONS"):
        assert versions.MODERN_VERSIONS == ("2026-07-28",)
