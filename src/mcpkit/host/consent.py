"""Consent: the user decides which tools run, which servers may use the model, and what they see.

How this works. A `ConsentPolicy` answers allow, ask or deny for each tool call, sampling
request, sampling result and elicitation a host is about to let through. Ask goes to the
`approve` callback the application gives (the terminal front end prompts); its `Approval` may be
remembered once (not at all), for the session (in the policy) or always (in a `DecisionStore`,
a file under the user's config directory for `mcpkit chat`). What leads to allow without
asking, in order: the application's own rules, then what the user said before, then, for a
server the application trusts, a tool's `readOnlyHint`. A server's annotations are hints it
gives about itself (the spec: untrusted unless the server is trusted), so an untrusted
server's hints never spare the user a question.

A tool approval is remembered against a fingerprint of the tool's definition (`fingerprint`):
a server that changes a tool's description or schema after approval ("rug pull") is asked
about again, and the request says so (`changed`, with the old and new description). Until the
user has answered about the new definition, a model is shown the one they answered about
(`definition_for_model`): the new text reaches no model before the user has seen it. Asks are
serialized per server and tool (per server for sampling and elicitation), so two calls made
together ask once when the first answer is remembered. A callback that fails denies.

What the user is shown is built in `consent_requests`; where answers are kept, in
`consent_store`. Everything public is importable from here.
"""

from __future__ import annotations

import asyncio
import inspect
import logging
from collections.abc import Callable, Iterable, Mapping
from enum import StrEnum
from typing import TYPE_CHECKING, Any, NamedTuple

from mcpkit.errors import MCPError
from mcpkit.host.consent_requests import (
    Approval,
    ApprovalCallback,
    ApprovalRequest,
    Remember,
    digest,
    elicitation_request,
    fingerprint,
    sampling_request,
    sampling_result_request,
    tool_definition,
    tool_request,
    url_request,
)
from mcpkit.host.consent_store import (
    DecisionKey,
    DecisionStore,
    DecisionStoreError,
    FileDecisionStore,
    MemoryDecisionStore,
    StoredDecision,
)

if TYPE_CHECKING:
    from mcpkit.host.config import HostConfig
    from mcpkit.types import Tool

__all__ = [
    "Approval",
    "ApprovalCallback",
    "ApprovalRequest",
    "ConsentDenied",
    "ConsentPolicy",
    "Decision",
    "DecisionKey",
    "DecisionStore",
    "DecisionStoreError",
    "FileDecisionStore",
    "MemoryDecisionStore",
    "Remember",
    "StoredDecision",
    "digest",
    "fingerprint",
    "tool_definition",
]

logger = logging.getLogger("mcpkit.host")
JSONObject = dict[str, Any]
# Keys of rules[server] that are not tool names (a tool name cannot hold "@").
SAMPLING, ELICITATION, URL = "@sampling", "@elicitation", "@url"


class Decision(StrEnum):
    ALLOW = "allow"
    ASK = "ask"
    DENY = "deny"


_REASONS = {
    "policy": "policy denies",
    "remembered": "the user declined earlier (remembered)",
    "declined": "the user declined",
    "no_one_to_ask": "no one to ask (no approval callback)",
    "callback_failed": "the approval callback failed",
}


class ConsentDenied(MCPError):
    """Not allowed: `request` is what was (or would have been) asked; `reason` one of
    "policy", "remembered", "declined", "no_one_to_ask", "callback_failed"."""

    def __init__(self, request: ApprovalRequest, reason: str, detail: str | None = None) -> None:
        because = f" ({detail})" if detail else ""
        super().__init__(f"{_REASONS.get(reason, reason)}{because}: {request.title}")
        self.request = request
        self.reason = reason


class _Verdict(NamedTuple):
    decision: Decision
    source: str  # a ConsentDenied reason, or "annotations" / "default" / "changed"
    previous: StoredDecision | None = None  # an approval of an older definition
    detail: str | None = None


class ConsentPolicy:
    """Who may do what without asking (see `decide`), and the asking.

    `rules[server]` maps a tool name, or "*" for all of that server's tools, to a Decision
    (or its string); three more keys: "@sampling" and "@elicitation" decide for that server
    what `sampling` and `elicitation` (the defaults for every server) decide, and "@url" may
    only be "ask" or "deny" (a URL is never opened without the user's consent; "@elicitation":
    "deny" denies URLs too). `trusted`: servers whose tool annotations are believed. `store`:
    where Remember.ALWAYS goes (default: a MemoryDecisionStore, so nothing outlives the
    process; give a FileDecisionStore to keep it). Raises ValueError for a bad rule.
    """

    def __init__(
        self,
        approve: ApprovalCallback | None = None,
        *,
        rules: Mapping[str, Mapping[str, Decision | str]] | None = None,
        trusted: Iterable[str] = (),
        store: DecisionStore | None = None,
        sampling: Decision = Decision.ASK,
        elicitation: Decision = Decision.ASK,
    ) -> None:
        self.approve = approve
        self.rules = _checked_rules(rules or {})
        self.trusted = frozenset(trusted)
        self.store: DecisionStore = MemoryDecisionStore() if store is None else store
        self.sampling = Decision(sampling)
        self.elicitation = Decision(elicitation)
        self._session: dict[DecisionKey, StoredDecision] = {}
        self._locks: dict[tuple[str, ...], asyncio.Lock] = {}

    @classmethod
    def from_config(
        cls,
        config: HostConfig,
        approve: ApprovalCallback | None = None,
        *,
        rules: Mapping[str, Mapping[str, Decision | str]] | None = None,
        trusted: Iterable[str] = (),
        store: DecisionStore | None = None,
        sampling: Decision = Decision.ASK,
        elicitation: Decision = Decision.ASK,
    ) -> ConsentPolicy:
        """A policy with each server's `"trust": true` (trusted) and `"autoApprove": [tool
        names]` (allowed, Cline / Claude style) from its configuration's extra keys, added to
        the `trusted` and `rules` given (a rule given for the same tool is kept: it is at
        least as strict); the other keywords as `ConsentPolicy` takes them. A value of the
        wrong type is logged and ignored: the server is not trusted, nothing of it is
        auto-approved. Raises ValueError for a bad rule."""
        trusting = set(trusted)
        merged = {server: dict(found) for server, found in (rules or {}).items()}
        for name, server in config.servers.items():
            trust = server.extra.get("trust")
            if trust is True:
                trusting.add(name)
            elif trust not in (None, False):
                logger.warning("server %s: `trust` must be true or false, not %r", name, trust)
            auto = server.extra.get("autoApprove")
            if auto is None:
                continue
            if not isinstance(auto, list) or not all(isinstance(t, str) for t in auto):
                logger.warning("server %s: `autoApprove` must be a list of tool names", name)
                continue
            for tool in auto:
                if not tool.startswith("@"):
                    merged.setdefault(name, {}).setdefault(tool, Decision.ALLOW)
        return cls(
            approve,
            rules=merged,
            trusted=trusting,
            store=store,
            sampling=sampling,
            elicitation=elicitation,
        )

    def decide(self, server: str, tool: Tool) -> Decision:
        """Whether calling `server`'s `tool` is allowed, asked or denied, before asking (no
        side effects). In order, the first that applies:

        1. `rules[server]`: the tool's own name, else "*"; deny wins when either says deny.
           Allow and deny are final; ask skips step 3.
        2. What the user said before (this session, then the store) for this exact
           definition. A denial of an earlier definition of the tool still denies; an
           approval of one does not allow (the definition changed: ask again).
        3. For a trusted server only: `readOnlyHint` true (and `destructiveHint` not true)
           allows. A destructive tool, or one without hints, is asked about; an untrusted
           server's hints are never believed.
        4. Ask.

        Raises DecisionStoreError when the store cannot be read.
        """
        return self._judge_tool(server, tool, fingerprint(tool)).decision

    def definition_for_model(self, server: str, tool: Tool) -> JSONObject:
        """The definition of `tool` (a `tool_definition`) a model may be shown: its own,
        unless it changed since the user last answered about the tool (a remembered answer
        for an earlier definition, none for this one) and no rule decides it; then the
        definition the user answered about, until they approve this one (they are asked at
        the next call, with `changed`). So a rug pull's new description or schema reaches
        no model before the user has seen it; the tool itself stays usable. Raises
        DecisionStoreError."""
        current = tool_definition(tool)
        rule = self._tool_rule(server, tool.name)
        if rule is not None and rule is not Decision.ASK:
            return current  # the application decided, whatever the definition says
        if self._recall(DecisionKey("tool", server, tool.name, digest(current))) is not None:
            return current
        answered = [d for d in self._earlier(server, tool.name) if d.definition is not None]
        if not answered:
            return current
        latest = max(answered, key=lambda d: d.saved)
        assert latest.definition is not None
        return latest.definition

    def check_store(self) -> None:
        """Read the decision store now, so that a corrupt one is found when the host starts
        rather than at the first tool call. Raises DecisionStoreError (naming the file, not
        quoting it), OSError."""
        self.store.all()

    async def check_tool(self, server: str, tool: Tool, arguments: JSONObject | None) -> None:
        """Return when the call may go ahead (asking the user if `decide` says ask).
        Raises ConsentDenied, DecisionStoreError."""
        if self._tool_rule(server, tool.name) is Decision.ALLOW:
            return  # the application's rule, whatever the definition: no fingerprint needed
        definition = tool_definition(tool)
        fp = digest(definition)
        trusted = server in self.trusted

        def request(verdict: _Verdict) -> ApprovalRequest:
            return tool_request(server, tool, arguments, trusted=trusted, previous=verdict.previous)

        await self._settle(
            DecisionKey("tool", server, tool.name, fp),
            lambda: self._judge_tool(server, tool, fp),
            request,
            definition,
        )

    async def check_sampling(self, server: str, params: JSONObject) -> None:
        """Before the model sees `server`'s sampling request (`params` as sent: messages,
        systemPrompt, includeContext, ...). Raises ConsentDenied."""
        key = DecisionKey("sampling", server)
        await self._settle(
            key,
            lambda: self._judge(key, self._policy(server, SAMPLING, self.sampling)),
            lambda _: sampling_request(server, params),
        )

    async def check_sampling_result(
        self, server: str, params: JSONObject, result: JSONObject
    ) -> JSONObject:
        """Before the model's answer to `server`'s request goes back to it: the user sees it
        first unless sampling is allowed for the server or such an approval was remembered.
        Returns the result to send: `result`, or what the user edited it into. Raises
        ConsentDenied."""
        key = DecisionKey("sampling_result", server)
        approval = await self._settle(
            key,
            lambda: self._judge(key, self._policy(server, SAMPLING, self.sampling)),
            lambda _: sampling_result_request(server, params, result),
        )
        if approval is not None and approval.edited is not None:
            return approval.edited
        return result

    async def check_elicitation(self, server: str, params: JSONObject) -> None:
        """Before `server`'s elicitation reaches the user. Form mode: who asks and what.
        URL mode (`"mode": "url"`): kind "url", with the full URL, its domain and warnings
        (punycode, a user name before the domain, plain http) in the details; always asked,
        unless denied, since the host never opens a URL without consent (only a denial is
        remembered); a URL that is not http(s) with a host is denied. Raises ConsentDenied."""
        if params.get("mode") == "url":
            await self._check_url(server, params)
            return
        key = DecisionKey("elicitation", server)
        await self._settle(
            key,
            lambda: self._judge(key, self._policy(server, ELICITATION, self.elicitation)),
            lambda _: elicitation_request(server, params),
        )

    def remembered(self) -> dict[DecisionKey, tuple[StoredDecision, Remember]]:
        """Every remembered decision and for how long (a session one shadows a stored one),
        to list and revoke (`forget`). Raises DecisionStoreError."""
        found = {key: (d, Remember.ALWAYS) for key, d in self.store.all().items()}
        found.update((key, (d, Remember.SESSION)) for key, d in self._session.items())
        return found

    def forget(self, key: DecisionKey) -> bool:
        """Revoke one remembered decision (session and store); whether there was one."""
        in_session = self._session.pop(key, None) is not None
        return self.store.forget(key) or in_session

    def clear(self) -> None:
        """Revoke every remembered decision, session and store."""
        self._session.clear()
        self.store.clear()

    # The machinery: judging, asking once per key, remembering.

    async def _settle(
        self,
        key: DecisionKey,
        judge: Callable[[], _Verdict],
        request: Callable[[_Verdict], ApprovalRequest],
        definition: JSONObject | None = None,
        *,
        remember_allow: bool = True,
    ) -> Approval | None:
        """Apply a verdict; ask when it is ask. The answer, when one was asked for."""
        verdict = judge()
        if verdict.decision is Decision.ASK:
            async with self._locks.setdefault(key[:3], asyncio.Lock()):
                verdict = judge()  # an answer given while this one waited counts
                if verdict.decision is Decision.ASK:
                    asked = request(verdict)
                    approval = await self._ask(asked)
                    if approval.allow is False or remember_allow:
                        self._remember(key, approval, definition)
                    if not approval.allow:
                        raise ConsentDenied(asked, "declined")
                    return approval
        if verdict.decision is Decision.DENY:
            raise ConsentDenied(request(verdict), verdict.source, verdict.detail)
        return None

    async def _ask(self, request: ApprovalRequest) -> Approval:
        if self.approve is None:
            raise ConsentDenied(request, "no_one_to_ask")
        try:
            answer = self.approve(request)
            if inspect.isawaitable(answer):
                answer = await answer
        except Exception as exc:
            detail = f"{type(exc).__name__}: {exc}"
            raise ConsentDenied(request, "callback_failed", detail) from exc
        if not isinstance(answer, Approval):
            detail = f"it returned {answer!r}, not an Approval"
            raise ConsentDenied(request, "callback_failed", detail)
        return answer

    def _remember(
        self, key: DecisionKey, approval: Approval, definition: JSONObject | None
    ) -> None:
        if approval.remember is Remember.ONCE:
            return
        record = StoredDecision.now(approval.allow, definition)
        if approval.remember is Remember.ALWAYS:
            self.store.put(key, record)
            self._session.pop(key, None)
        else:
            self._session[key] = record

    def _recall(self, key: DecisionKey) -> StoredDecision | None:
        found = self._session.get(key)
        return found if found is not None else self.store.get(key)

    def _judge(self, key: DecisionKey, policy: Decision) -> _Verdict:
        if policy is not Decision.ASK:
            return _Verdict(policy, "policy")
        found = self._recall(key)
        if found is not None:
            return _Verdict(Decision.ALLOW if found.allow else Decision.DENY, "remembered")
        return _Verdict(Decision.ASK, "default")

    def _judge_tool(self, server: str, tool: Tool, fp: str) -> _Verdict:
        rule = self._tool_rule(server, tool.name)
        if rule is not None and rule is not Decision.ASK:
            return _Verdict(rule, "policy")
        verdict = self._judge(DecisionKey("tool", server, tool.name, fp), Decision.ASK)
        if verdict.decision is not Decision.ASK:
            return verdict
        earlier = self._earlier(server, tool.name)
        if any(not d.allow for d in earlier):
            return _Verdict(Decision.DENY, "remembered")
        if earlier:
            latest = max(earlier, key=lambda d: d.saved)
            return _Verdict(Decision.ASK, "changed", latest)
        if rule is None and server in self.trusted and _read_only(tool):
            return _Verdict(Decision.ALLOW, "annotations")
        return _Verdict(Decision.ASK, "default")

    def _earlier(self, server: str, name: str) -> list[StoredDecision]:
        """What the user answered about this tool, whatever its definition (session answers
        shadow stored ones)."""
        same = ("tool", server, name)
        earlier = {k: d for k, d in self.store.all().items() if k[:3] == same}
        earlier.update((k, d) for k, d in self._session.items() if k[:3] == same)
        return list(earlier.values())

    def _tool_rule(self, server: str, name: str) -> Decision | None:
        rules = self.rules.get(server)
        if not rules:
            return None
        exact = None if name.startswith("@") else rules.get(name)
        wildcard = rules.get("*")
        if Decision.DENY in (exact, wildcard):
            return Decision.DENY
        return exact if exact is not None else wildcard

    def _policy(self, server: str, key: str, default: Decision) -> Decision:
        return self.rules.get(server, {}).get(key, default)

    async def _check_url(self, server: str, params: JSONObject) -> None:
        key = DecisionKey("url", server)
        request = url_request(server, params)

        def judge() -> _Verdict:
            policies = (
                self._policy(server, ELICITATION, self.elicitation),
                self._policy(server, URL, Decision.ASK),
            )
            if Decision.DENY in policies:
                return _Verdict(Decision.DENY, "policy")
            if request.details["domain"] is None:
                return _Verdict(Decision.DENY, "policy", detail="only http(s) URLs are opened")
            found = self._recall(key)
            if found is not None and not found.allow:
                return _Verdict(Decision.DENY, "remembered")
            return _Verdict(Decision.ASK, "default")

        await self._settle(
            key,
            judge,
            lambda _: request,
            remember_allow=False,
        )


def _checked_rules(
    rules: Mapping[str, Mapping[str, Decision | str]],
) -> dict[str, dict[str, Decision]]:
    checked: dict[str, dict[str, Decision]] = {}
    for server, decisions in rules.items():
        checked[server] = {}
        for name, value in decisions.items():
            where = f"rules[{server!r}][{name!r}]"
            try:
                decision = Decision(value)
            except ValueError:
                raise ValueError(f"{where}: {value!r} is not allow, ask or deny") from None
            if name.startswith("@") and name not in (SAMPLING, ELICITATION, URL):
                raise ValueError(f"{where}: not a tool name, nor @sampling, @elicitation, @url")
            if name == URL and decision is Decision.ALLOW:
                raise ValueError(f"{where}: a URL is never opened without the user's consent")
            checked[server][name] = decision
    return checked


def _read_only(tool: Tool) -> bool:
    hints = tool.annotations
    return hints is not None and hints.read_only_hint is True and hints.destructive_hint is not True
