"""What the side app's routes share: the agent's state they report on (SideState), filled in as the agent
starts, and the admin token's check (Guard)."""

from __future__ import annotations

import hmac
import time
from collections.abc import Awaitable, Callable
from concurrent.futures import Executor
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np
from fastapi import HTTPException, Query, Request

from agent.knowledge.base import KnowledgeBase
from agent.side.auth import AUTH_BLOCK_S, AuthFailures, presented_token
from agent.side.messages import MessageStore
from agent.side.metrics import Metrics
from agent.side.records import CallStore

if TYPE_CHECKING:
    from agent.sip.registration import RegistrationStatus

INSTANCE = Query(None, max_length=200, description="only the calls (messages, questions) of this agent, on records "
                                                    "several agents share")


@dataclass(frozen=True)
class SideConfig:
    """The settings the side app's routes read (agent.stages.side_config makes it)."""

    admin_token: str
    """Empty: every admin surface is refused (403)."""
    http_host: str
    """Where the side app listens: beyond loopback the browser phone needs the token too."""
    http_docs: bool
    web_phone: bool
    metrics_window_s: float
    recordings_path: Path
    shared_records: bool
    """The records live in a database every agent of the line shares (a recording may be on another agent)."""


@dataclass
class SideState:
    """What the side app reports on; filled in as the agent starts."""

    config: SideConfig
    metrics: Metrics
    store: CallStore
    knowledge: dict[str, KnowledgeBase] | None = None
    """One knowledge base per dialplan profile, by profile name."""
    sip_listening: Callable[[], bool] = field(default=lambda: False)
    registration: Callable[[], RegistrationStatus | None] = field(default=lambda: None)
    """None when no registrar is configured."""
    spare_calls: Callable[[], int | None] = field(default=lambda: None)
    """Calls the agent can still take (see call/capacity), None before SIP starts."""
    messages: MessageStore | None = None
    """Messages callers left (see side/messages)."""
    embed: Callable[[list[str]], np.ndarray] | None = None
    """The KB's sentence embedder (texts -> unit vectors), once the models are loaded."""
    open_call: Callable[[object], Awaitable[str | None]] | None = None
    """Run a WebSocket stream or browser call as a call (Agent.open_call), once SIP is up."""
    background: Executor | None = None
    """Where report work runs: behind every call's model work (None: the default thread pool)."""
    not_ready: dict[str, str] = field(default_factory=lambda: {"models": "loading", "kb": "not loaded",
                                                               "sip": "not started"})
    reindexed: Callable[[list[str]], None] = field(default=lambda profiles: None)
    """On a worker thread after POST /kb/reindex with the profiles it re-indexed: record their index versions
    and tell the other agents on a shared database (side/kb_sync)."""

    def readiness(self) -> dict[str, str]:
        reasons = dict(self.not_ready)
        for name, knowledge in (self.knowledge or {}).items():
            if knowledge.index.problem:
                reasons[f"kb:{name}"] = knowledge.index.problem
        if "sip" not in reasons and not self.sip_listening():
            reasons["sip"] = "not listening"
        registration = self.registration()
        if registration is not None and not registration.registered:
            reasons["registration"] = registration.describe()
        return reasons


class Guard:
    """The admin token's check, for every surface (endpoints, pages, the media stream), with repeated failures
    from one client blocked for a while."""

    def __init__(self, admin_token: str) -> None:
        self._token = admin_token
        self._failures = AuthFailures()

    def refusal(self, client: str, given: bytes) -> tuple[int, str] | None:
        """Why an admin request from `client` presenting `given` is refused (HTTP status, reason); None when its
        token is right."""
        token = self._token
        if not token:
            return 403, "admin endpoints are disabled: set AGENT_ADMIN_TOKEN to enable them"
        now = time.monotonic()
        if self._failures.blocked(client, now):
            return 429, "too many failed attempts; try again later"
        if not hmac.compare_digest(given, token.encode()):
            self._failures.failed(client, now)
            return 401, "a valid bearer token is required"
        return None

    def _authorize(self, request: Request, challenge: str) -> None:
        client = request.client.host if request.client else "?"
        refused = self.refusal(client, presented_token(request.headers.get("authorization", "")))
        if refused is not None:
            status, reason = refused
            headers = {429: {"Retry-After": str(AUTH_BLOCK_S)}, 401: {"WWW-Authenticate": challenge}}.get(status)
            raise HTTPException(status, reason, headers=headers)

    def admin(self, request: Request) -> None:
        """A FastAPI dependency: the request carries the token as a bearer header."""
        self._authorize(request, "Bearer")

    def admin_page(self, request: Request) -> None:
        """For pages a person opens in a browser: the browser asks for the token itself (any user name)."""
        self._authorize(request, 'Basic realm="phone agent", charset="UTF-8"')
