"""The Host: many servers under one application, with the user in charge.

`Host` puts the parts together: servers from the configuration files people already have
(`load_config`, `HostServers`), one view of their tools, prompts and resources (`HostTools`,
`HostPrompts`, `HostResources`), the user's consent in front of every tool call, sampling
request and elicitation (`ConsentPolicy`), servers' sampling served by the host's models
(`HostSampler`, `choose_model`), and the agent loop (`Agent`). The LLM adapters are in
`mcpkit.host.providers`. docs/host.md shows an agent in 30 lines.
"""

from typing import TYPE_CHECKING, Any

from mcpkit._renamed import renamed
from mcpkit.host.agent import Agent, AgentEvent, AgentOptions, StepLimitReached
from mcpkit.host.config import ConfigError, HostConfig, InputSpec, ServerConfig, load_config
from mcpkit.host.consent import (
    Approval,
    ApprovalRequest,
    ConsentDenied,
    ConsentPolicy,
    Decision,
    DecisionStoreError,
    FileDecisionStore,
    MemoryDecisionStore,
    Remember,
)
from mcpkit.host.host import Host
from mcpkit.host.models import ModelInfo, choose_model
from mcpkit.host.resources import AmbiguousResource, HostResources, HostTemplates
from mcpkit.host.sampling import HostSampler, SharedContext
from mcpkit.host.servers import HostServers, ServerState, ServerStatus, ServerUnavailable, Timing
from mcpkit.host.tools import HostItem, HostPrompts, HostTools

__all__ = [
    "Agent",
    "AgentEvent",
    "AgentOptions",
    "AmbiguousResource",
    "Approval",
    "ApprovalRequest",
    "ConfigError",
    "ConsentDenied",
    "ConsentPolicy",
    "Decision",
    "DecisionStoreError",
    "FileDecisionStore",
    "Host",
    "HostConfig",
    "HostItem",
    "HostPrompts",
    "HostResources",
    "HostSampler",
    "HostServers",
    "HostTemplates",
    "HostTools",
    "InputSpec",
    "MemoryDecisionStore",
    "ModelInfo",
    "Remember",
    "ServerConfig",
    "ServerStatus",
    "ServerUnavailable",
    "SharedContext",
    "ServerState",
    "StepLimitReached",
    "Timing",
    "choose_model",
    "load_config",
]

# Old spellings, answered for one release with a DeprecationWarning (issue 23): `State` also
# named mcpkit.protocol's connection state.
_RENAMED = {"State": "ServerState"}

# Hidden from type checkers: a typo in `from ... import` stays an error there, and so does
# an old spelling (it works at run time, with its warning).
if not TYPE_CHECKING:

    def __getattr__(name: str) -> Any:
        return globals()[renamed(__name__, name, _RENAMED)]
