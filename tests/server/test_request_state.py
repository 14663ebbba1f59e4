"""The sealed requestState: bound to its request, its principal and a TTL; keys rotate."""

from __future__ import annotations

import base64

import pytest

from mcpkit.errors import InvalidParams
from mcpkit.server.request_state import (
    ENV_KEYS,
    RequestStateCodec,
    RequestStateKeys,
    request_digest,
)

OLD = "an-old-secret-shared-by-workers"
NEW = "a-new-secret-shared-by-workers!"
BOUND = {"method": "tools/call", "digest": "d1", "principal": "alice"}
PAYLOAD = {"answers": {"elicit-1": {"action": "decline"}}}


def seal(codec: RequestStateCodec, now: float = 100.0, **bound: object) -> str:
    return codec.seal(PAYLOAD, **{**BOUND, **bound}, now=now)  # type: ignore[arg-type]


def opens(codec: RequestStateCodec, token: str, now: float = 100.0, **bound: object) -> dict:
    return codec.open(token, **{**BOUND, **bound}, now=now)  # type: ignore[arg-type]


def test_a_sealed_payload_opens_for_its_own_request_only() -> None:
    codec = RequestStateCodec(RequestStateKeys([NEW]))
    token = seal(codec)
    assert opens(codec, token) == {"answers": {"elicit-1": {"action": "decline"}}}
    assert b"decline" not in base64.urlsafe_b64decode(token + "==")  # encrypted, not encoded
    for other in (
        {"method": "prompts/get"},
        {"digest": "d2"},
        {"principal": "mallory"},
        {"principal": None},
    ):
        with pytest.raises(InvalidParams):
            opens(codec, token, **other)
    anonymous = seal(codec, principal=None)
    assert opens(codec, anonymous, principal=None)["answers"]
    with pytest.raises(InvalidParams):
        opens(codec, anonymous, principal="")


def test_every_tampered_byte_and_every_garbage_token_is_invalid_params() -> None:
    codec = RequestStateCodec(RequestStateKeys([NEW]))
    raw = bytearray(base64.urlsafe_b64decode(seal(codec) + "=="))
    for index in range(len(raw)):
        forged = bytearray(raw)
        forged[index] ^= 0x01
        token = base64.urlsafe_b64encode(bytes(forged)).decode().rstrip("=")
        with pytest.raises(InvalidParams):
            opens(codec, token)
    for garbage in (
        "",
        "!!!",
        "x",
        "AAAA",
        "a" * 5000,
        base64.urlsafe_b64encode(b"\x02" + raw[1:]).decode(),
    ):
        with pytest.raises(InvalidParams) as caught:
            opens(codec, garbage)
        assert caught.value.code == -32602


def test_expiry_is_sealed_inside() -> None:
    codec = RequestStateCodec(RequestStateKeys([NEW]), ttl=60)
    token = seal(codec, now=1000.0)
    assert opens(codec, token, now=1059.9) == PAYLOAD
    with pytest.raises(InvalidParams, match="expired"):
        opens(codec, token, now=1060.0)


def test_rotation_new_key_seals_old_key_still_opens_until_dropped() -> None:
    before = RequestStateCodec(RequestStateKeys([OLD]))
    during = RequestStateCodec(RequestStateKeys([NEW, OLD]))
    after = RequestStateCodec(RequestStateKeys([NEW]))
    old_token = seal(before)
    assert opens(during, old_token) == PAYLOAD
    new_token = seal(during)
    assert opens(after, new_token) == PAYLOAD
    with pytest.raises(InvalidParams):
        opens(before, new_token)
    with pytest.raises(InvalidParams):
        opens(after, old_token)


def test_workers_share_keys_through_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(ENV_KEYS, f" {NEW} ,{OLD}")
    one, two = RequestStateCodec(RequestStateKeys()), RequestStateCodec(RequestStateKeys())
    assert opens(two, seal(one)) == PAYLOAD
    monkeypatch.delenv(ENV_KEYS)
    alone = RequestStateKeys()
    assert alone.random
    with pytest.raises(InvalidParams):  # a random key per process: another process cannot open
        opens(RequestStateCodec(alone), seal(one))


def test_keys_are_checked() -> None:
    with pytest.raises(ValueError, match="at least 16 bytes"):
        RequestStateKeys(["short"])
    with pytest.raises(TypeError):
        RequestStateKeys(NEW)  # type: ignore[arg-type]
    generated = RequestStateKeys.generate()
    assert len(base64.urlsafe_b64decode(generated + "==")) == 32
    assert (
        RequestStateKeys([generated, generated.encode()]).aes_keys[0]
        == RequestStateKeys([generated]).aes_keys[0]
    )


def test_digest_ignores_what_changes_between_rounds() -> None:
    first = {"name": "greet", "arguments": {"a": 1, "b": [1, 2]}, "_meta": {"x": 1}}
    retry = {
        "arguments": {"b": [1, 2], "a": 1},
        "name": "greet",
        "_meta": {"y": 2},
        "inputResponses": {"elicit-1": {}},
        "requestState": "t",
    }
    assert request_digest(first) == request_digest(retry)
    assert request_digest(first) != request_digest({**first, "arguments": {"a": 2, "b": [1, 2]}})
    assert request_digest(first) != request_digest({**first, "arguments": {"a": 1, "b": [2, 1]}})
