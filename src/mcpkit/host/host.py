"""`Host`: the servers, the user's consent, the model, in one object.

It wires the parts of `mcpkit.host` together the way an application needs them: servers from
a configuration (`HostServers`), one view of their tools, prompts and resources, a
`ConsentPolicy` in front of every tool call, sampling request and elicitation, servers'
sampling served by the host's models (`HostSampler`), and `agent()` for a conversation. Each
part stays usable alone.
"""

from __future__ import annotations

import inspect
import os
from collections.abc import Awaitable, Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, Self, Unpack

from mcpkit.host import labelled
from mcpkit.host.config import HostConfig, ServerConfig, load_config
from mcpkit.host.consent import ConsentDenied, ConsentPolicy
from mcpkit.host.resources import HostResources
from mcpkit.host.sampling import ContextLevel, HostSampler, SharedContext
from mcpkit.host.servers import HostServers, Timing
from mcpkit.host.tools import HostPrompts, HostTools

if TYPE_CHECKING:
    from mcpkit.client import ClientKeywords, HTTPAuth
    from mcpkit.host.agent import Agent, AgentOptions
    from mcpkit.host.consent import ApprovalCallback, DecisionStore
    from mcpkit.host.models import ModelInfo
    from mcpkit.host.providers import Provider

JSONObject = dict[str, Any]
# (server, elicitation params as sent) -> an ElicitResult dict: the application's form or page
ElicitCallback = Callable[[str, JSONObject], "Awaitable[JSONObject] | JSONObject"]


# What a Host answers itself, so that the consent policy stands in front of it.
_ANSWERED_BY_THE_HOST = {
    "sampling": "the host's models answer servers' sampling (Host(provider=...))",
    "elicitation": "give Host(elicit=...), called (server, params) after the consent policy",
}


class Host:
    """Many servers under one application (see the module docstring).

    `config`: a `HostConfig`, a path or a dict (`load_config`). `provider`: the model(s) for the
    agent and for servers' sampling (one `Provider`, or several by name with `models` saying
    which serves what); without one, servers are not offered sampling. `approve`: asked
    whenever the consent policy says "ask" (without it, "ask" means no). `elicit`: shows a
    server's form (or URL) to the user; without it servers are not offered elicitation.
    `auth(server_config)`: each remote server's `httpx.Auth` (an `OAuth()` of its own).
    `client_options`: as `HostServers` takes them, but without `sampling` / `elicitation`
    (the host answers those itself, after the consent policy).

    Errors: the constructor raises TypeError for an `elicit` that cannot take (server,
    params) and for `sampling` / `elicitation` in `client_options`. Each of the others is an
    `mcpkit.errors.MCPError`: the constructor raises ConfigError for a configuration it
    cannot use; `async with` raises DecisionStoreError (a corrupt consent
    store); a call on a server that is not ready raises ServerUnavailable, a tool call the user
    or the policy refuses ConsentDenied, and the client's errors (ProtocolError,
    ConnectionClosed, RequestTimeout, ...) pass through.
    """

    def __init__(
        self,
        config: HostConfig | Mapping[str, Any] | str | os.PathLike[str],
        *,
        provider: Provider | Mapping[str, Provider] | None = None,
        models: Sequence[ModelInfo] | None = None,
        approve: ApprovalCallback | None = None,
        consent: ConsentPolicy | None = None,
        store: DecisionStore | None = None,
        elicit: ElicitCallback | None = None,
        include_context: ContextLevel = "thisServer",
        timing: Timing | None = None,
        client_options: ClientKeywords | None = None,
        auth: Callable[[ServerConfig], HTTPAuth | None] | None = None,
        separator: str = "__",
    ) -> None:
        labelled.refused(client_options, _ANSWERED_BY_THE_HOST)
        if elicit is not None:
            labelled.check("elicit", elicit, ("params",))
        self.config = config if isinstance(config, HostConfig) else load_config(config)
        self.consent = consent or ConsentPolicy.from_config(self.config, approve, store=store)
        self.context = SharedContext()
        self.sampler = (
            None
            if provider is None
            else HostSampler(
                provider,
                self.consent,
                models=models,
                context=self.context,
                include_context=include_context,
            )
        )
        self._elicit = elicit
        self.servers = HostServers(
            self.config,
            timing=timing,
            client_options=client_options,
            sampling=self.sampler,
            elicitation=None if elicit is None else self._elicitation,
            auth=auth,
        )
        self.tools = HostTools(self.servers, separator=separator, consent=self.consent)
        self.prompts = HostPrompts(self.servers, separator=separator)
        self.resources = HostResources(self.servers, separator=separator)

    async def __aenter__(self) -> Self:
        """Start the servers (see `HostServers.start`). Raises DecisionStoreError (the
        consent store's file is corrupt: it names the file) before any server starts."""
        self.consent.check_store()
        await self.servers.start()
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await self.aclose()

    async def aclose(self) -> None:
        await self.servers.aclose()

    def agent(self, *, model: str | None = None, **options: Unpack[AgentOptions]) -> Agent:
        """A conversation over the host's tools with its model (`Agent` options: `system`,
        `max_steps`, `max_tokens`, `on_event`). `model`: a name from the model table (default:
        the first). Raises ValueError without a provider or for a model not in the table;
        the agent's `send` raises StepLimitReached and what the provider raises
        (ProviderError)."""
        from mcpkit.host.agent import Agent

        if self.sampler is None:
            raise ValueError("Host(provider=...) is needed for an agent")
        chosen = next((m for m in self.sampler.models if m.name == model), None)
        if model is not None and chosen is None:
            raise ValueError(f"{model!r} is not in the model table")
        chosen = chosen or self.sampler.models[0]
        provider = self.sampler.provider_for(chosen)
        return Agent(self.tools, provider, self.consent, model=chosen.name, **options)

    async def share(self, uri: str, *, server: str | None = None) -> None:
        """Share a resource's text with the server it came from (the context its sampling
        requests may include; every server's, when `include_context="allServers"`). Raises
        what `HostResources.read_resource` raises: KeyError (no server offers `uri`),
        AmbiguousResource, ServerUnavailable, and the client's errors."""
        source = server or await self.resources.server_for(uri)
        read = await self.resources.read_resource(uri, server=source)
        for item in read.to_wire().get("contents", []):
            if "text" in item:
                self.context.add(source, item["text"])

    async def _elicitation(self, server: str, params: Any) -> JSONObject:
        wire: JSONObject = params.to_wire()
        try:
            await self.consent.check_elicitation(server, wire)
        except ConsentDenied:
            return {"action": "decline"}
        assert self._elicit is not None
        answer = self._elicit(server, wire)
        return await answer if inspect.isawaitable(answer) else answer
