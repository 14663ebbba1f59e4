"""What the two SDK adapters share: their model table, and SDK exceptions turned into a
ProviderError that helps and leaks nothing.

The SDKs' own messages carry the whole response body, and their exceptions the request with
its headers; an API may even quote the key it refused. A ProviderError is built from the
parts a person needs (the HTTP status, the API's error type and message, the request id) and
then scrubbed of the provider's key and anything shaped like a key or a bearer token. It is
raised `from None`, so a traceback does not print the SDK's exception underneath either.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from mcpkit.host.models import ModelInfo
from mcpkit.host.providers.base import ProviderError

_LOOKS_SECRET = (
    (re.compile(r"(?i)\b(bearer)\s+\S+"), r"\1 [redacted]"),
    (re.compile(r"\bsk-[A-Za-z0-9_\-]{6,}"), "[redacted]"),
)


def model_table(
    models: Sequence[ModelInfo | str] | None, default: str, provider: str
) -> tuple[ModelInfo, ...]:
    """The models a provider serves: names become ModelInfo with neutral ratings; none
    given, the default model alone."""
    if models is None:
        return (ModelInfo(default, provider),)
    return tuple(m if isinstance(m, ModelInfo) else ModelInfo(m, provider) for m in models)


def status_error(
    api: str, status: int, body: Any, request_id: str | None, secrets: Iterable[str]
) -> ProviderError:
    """The API answered `status`: its error type and message, as the body has them (both
    APIs nest them under "error"; a body that is no JSON object is quoted, shortened)."""
    error = body.get("error", body) if isinstance(body, Mapping) else None
    if isinstance(error, Mapping):
        error_type = error.get("type") if isinstance(error.get("type"), str) else None
        said = str(error.get("message") or "no message")
    else:
        error_type = None
        said = str(body)[:300] if body else "no message"
    kind = f" {error_type}" if error_type else ""
    where = f" (request {request_id})" if request_id else ""
    text = f"{api} API error {status}{kind}: {said}{where}"
    return ProviderError(redact(text, secrets), status=status, error_type=error_type)


def unreachable(api: str, url: Any, timed_out: bool, secrets: Iterable[str]) -> ProviderError:
    """No answer: the connection failed or the timeout ran out (`url` without its query)."""
    place = str(url).split("?", 1)[0]
    why = "no answer within the timeout" if timed_out else "could not connect"
    return ProviderError(redact(f"{api} API at {place}: {why}", secrets))


def other_error(api: str, exc: BaseException, secrets: Iterable[str]) -> ProviderError:
    """Anything else the SDK raised (an answer it could not read, a missing key)."""
    return ProviderError(redact(f"{api}: {type(exc).__name__}: {exc}", secrets))


def redact(text: str, secrets: Iterable[str]) -> str:
    for secret in secrets:
        if len(secret) >= 8:  # a short string would blank out ordinary words
            text = text.replace(secret, "[redacted]")
    for pattern, replacement in _LOOKS_SECRET:
        text = pattern.sub(replacement, text)
    return text
