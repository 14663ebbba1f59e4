"""What the two SDK adapters share: the life of the SDK client they made, their model table,
and SDK exceptions turned into a ProviderError that helps and leaks nothing.

The SDKs' own messages carry the whole response body, and their exceptions the request with
its headers; an API may even quote the key it refused. A ProviderError is built from the
parts a person needs (the HTTP status, the API's error type and message, the request id) and
then scrubbed of the provider's key and anything shaped like a key or a bearer token. It is
raised `from None`, so a traceback does not print the SDK's exception underneath either.
"""

from __future__ import annotations

import re
from collections.abc import Awaitable, Callable, Iterable, Mapping, Sequence
from types import ModuleType
from typing import Any, Self, TypeVar

from mcpkit.host.models import ModelInfo
from mcpkit.host.providers.base import ProviderError

T = TypeVar("T")
_LOOKS_SECRET = (
    (re.compile(r"(?i)\b(bearer)\s+\S+"), r"\1 [redacted]"),
    (re.compile(r"\bsk-[A-Za-z0-9_\-]{6,}"), "[redacted]"),
)


class SDKProvider:
    """The part of a provider around its SDK client: `api` names it in errors; `client` is
    closed by `aclose` (or `async with`) only when the provider made it (`_owned`);
    `_secrets` are scrubbed from every error."""

    api = ""
    client: Any
    _owned: bool
    _secrets: list[str]

    async def _send(
        self, sdk: ModuleType, base_error: type[Exception], call: Callable[[], Awaitable[T]]
    ) -> T:
        """Await the SDK request `call()`; every failure comes out as a ProviderError. Both
        SDKs name their status, connection and timeout errors alike; `base_error` is the
        rest of theirs (a missing key, an answer they could not read)."""
        try:
            return await call()
        except sdk.APIStatusError as exc:
            raise status_error(
                self.api, exc.status_code, exc.body, exc.request_id, self._secrets
            ) from None
        except sdk.APIConnectionError as exc:
            timed_out = isinstance(exc, sdk.APITimeoutError)
            raise unreachable(self.api, exc.request.url, timed_out, self._secrets) from None
        # also the SDKs' own checks: no credentials, max_tokens too large without streaming
        except (base_error, ValueError, TypeError) as exc:
            raise other_error(self.api, exc, self._secrets) from None

    async def aclose(self) -> None:
        """Close the HTTP connections of a client this provider made (not one it was given)."""
        if self._owned:
            await self.client.close()

    async def __aenter__(self) -> Self:
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await self.aclose()


def client_options(max_retries: int, timeout: float | None) -> dict[str, Any]:
    """The SDK client's retry and timeout options (its own default timeout when None)."""
    options: dict[str, Any] = {"max_retries": max_retries}
    if timeout is not None:
        options["timeout"] = timeout
    return options


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
