"""Client ID Metadata Documents: a client whose id is an https URL, described at that URL.

The URL must have the shape the draft requires (https, a path, no fragment, no user info, no
dot segments) and, when `trusted_hosts` is set, one of those hosts. The document is fetched
through the SSRF guard of `fetch`; it must be a JSON object whose `client_id` is exactly the
URL, with a `client_name` and redirect URIs that follow the usual rules, and it may not claim
a client secret (a document is public: its client authenticates with nothing, or with
private_key_jwt). Valid clients are cached for what the document's Cache-Control allows,
capped; a small LRU bounds the cache.
"""

from __future__ import annotations

from collections import OrderedDict
from urllib.parse import urlsplit

from mcpkit.auth.server.asgi import OAuthErrorResponse
from mcpkit.auth.server.clients import MetadataError, OAuthClient, check_metadata
from mcpkit.auth.server.fetch import FetchRefused, GuardedFetcher
from mcpkit.auth.server.options import AuthServerOptions

DOCUMENT_AUTH_METHODS = ("none", "private_key_jwt")


class MetadataDocuments:
    def __init__(self, options: AuthServerOptions, fetcher: GuardedFetcher) -> None:
        self._options = options
        self._policy = options.cimd
        self._fetcher = fetcher
        self._cache: OrderedDict[str, tuple[OAuthClient, float]] = OrderedDict()
        schemes = ("https://", "http://") if self._policy.allow_http else ("https://",)
        self._schemes = schemes

    def is_document_url(self, client_id: str) -> bool:
        """Whether `client_id` names a metadata document (rather than a registered id)."""
        return client_id.startswith(self._schemes)

    async def client(self, url: str) -> OAuthClient:
        """The client described at `url`. Raises OAuthErrorResponse (invalid_client) when the URL or
        its document is refused; the description says why without echoing the document."""
        now = self._options.clock()
        cached = self._cache.get(url)
        if cached is not None and cached[1] > now:
            self._cache.move_to_end(url)
            return cached[0]
        self._check_url(url)
        try:
            fetched = await self._fetcher.get_json(url)
        except FetchRefused as exc:
            raise _refused(f"client metadata document: {exc}") from None
        client = self._client(url, fetched.document)
        policy = self._policy
        age = policy.default_cache_age if fetched.max_age is None else fetched.max_age
        age = min(age, policy.max_cache_age)
        if age > 0:
            self._cache[url] = (client, now + age)
            self._cache.move_to_end(url)
            while len(self._cache) > policy.cache_size:
                self._cache.popitem(last=False)
        return client

    def _check_url(self, url: str) -> None:
        parts = urlsplit(url)
        segments = parts.path.split("/")
        if (
            not parts.hostname
            or parts.path in ("", "/")
            or "#" in url
            or parts.username is not None
            or "." in segments
            or ".." in segments
        ):
            raise _refused("client id is not a valid metadata document URL")
        trusted = self._policy.trusted_hosts
        if trusted and not any(_host_matches(parts.hostname, pattern) for pattern in trusted):
            raise _refused("client metadata documents from this host are not accepted")

    def _client(self, url: str, document: object) -> OAuthClient:
        if not isinstance(document, dict):
            raise _refused("client metadata document is not a JSON object")
        if document.get("client_id") != url:
            raise _refused("client metadata document's client_id is not its URL")
        if not isinstance(document.get("client_name"), str):
            raise _refused("client metadata document has no client_name")
        if "client_secret" in document:
            raise _refused("client metadata document must not hold a secret")
        try:
            accepted = check_metadata(
                document, self._options, default_method="none", methods=DOCUMENT_AUTH_METHODS
            )
        except MetadataError as exc:
            raise _refused(f"client metadata document: {exc.description}") from None
        return OAuthClient.from_metadata(url, accepted, None, "document")


def _refused(description: str) -> OAuthErrorResponse:
    return OAuthErrorResponse("invalid_client", description)


def _host_matches(host: str, pattern: str) -> bool:
    host, pattern = host.lower(), pattern.lower()
    return host.endswith(pattern) if pattern.startswith(".") else host == pattern
