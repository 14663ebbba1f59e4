"""Which scopes to ask for (MCP Scope Selection Strategy and Step-Up Authorization Flow).

1. the `scope` of the challenge in hand (the server's word for this operation), else
2. the resource metadata's `scopes_supported`, else nothing (no `scope` parameter at all);
3. plus the scopes already held from the same authorization server (re-authorizing must not
   lose them: the step-up union) and the ones the application configured;
4. `offline_access` exactly when the authorization server lists it in `scopes_supported` and
   there is a user to refresh for; never otherwise, whoever asked for it.
"""

from __future__ import annotations

from collections.abc import Sequence

from mcpkit.auth.client.challenge import Challenge
from mcpkit.auth.client.discovery import AuthServer

OFFLINE_ACCESS = "offline_access"


def select_scope(
    challenge: Challenge,
    server: AuthServer,
    held: str | None,
    configured: Sequence[str],
    *,
    offline: bool,
) -> str | None:
    """The `scope` parameter to send (None: send none)."""
    if challenge.scope is not None:
        wanted = challenge.scope.split()
    else:
        wanted = list(server.resource_scopes or ())
    wanted = (held or "").split() + wanted + list(configured)
    chosen = [scope for scope in dict.fromkeys(wanted) if scope != OFFLINE_ACCESS]
    if offline and OFFLINE_ACCESS in (server.scopes_supported or ()):
        chosen.append(OFFLINE_ACCESS)
    return " ".join(chosen) or None
