"""The side app: health, readiness, metrics, KB re-indexing and call records over HTTP (FastAPI).

Bound to loopback by default. /healthz, /readyz and /metrics are open; /kb/reindex, /calls*, /messages*,
/reports/* and /dashboard need `Authorization: Bearer $AGENT_ADMIN_TOKEN` (or HTTP Basic with the token as
password, which is how a browser opening /dashboard sends it), and are refused (403) while no token is set.
The browser phone (/phone) is off unless AGENT_WEB_PHONE; beyond loopback it needs the token too.
"""

from __future__ import annotations

import asyncio
import contextlib
import hmac
import ipaddress
import re
import time
from concurrent.futures import Executor
from dataclasses import dataclass, field

from fastapi import Depends, FastAPI, HTTPException, Query, Request, WebSocket
from fastapi.responses import FileResponse, HTMLResponse, JSONResponse, PlainTextResponse, Response
from prometheus_client import CONTENT_TYPE_LATEST, generate_latest

from agent.browser.offer import OfferError
from agent.browser.phone import PAGE, BrowserPhone, CallRefused
from agent.knowledge.base import KnowledgeBase
from agent.knowledge.index import RefreshBusy
from agent.settings import Settings
from agent.side.auth import AUTH_BLOCK_S, AuthFailures, presented_token
from agent.side.dashboard import render_dashboard
from agent.side.messages import MessageStore
from agent.side.metrics import Metrics, summary_markdown
from agent.side.recordings import recording_path
from agent.side.records import CallStore
from agent.side.unanswered import group_by_meaning
from agent.sip.build_info import installed as installed_pjsua2
from agent.stream.call import serve_stream

MAX_BODY_BYTES = 64 * 1024
CALL_ID = re.compile(r"^[0-9a-f]{16}$")


INSTANCE = Query(None, max_length=200, description="only the calls (messages, questions) of this agent, on records "
                                                    "several agents share")


@dataclass
class SideState:
    """What the side app reports on; filled in as the agent starts."""

    settings: Settings
    metrics: Metrics
    store: CallStore
    knowledge: dict[str, KnowledgeBase] | None = None
    """One knowledge base per dialplan profile, by profile name."""
    sip_listening: object = field(default=lambda: False)
    """Callable: is SIP listening right now?"""
    registration: object = field(default=lambda: None)
    """Callable: the RegistrationStatus, or None when no registrar is configured."""
    spare_calls: object = field(default=lambda: None)
    """Callable: calls the agent can still take (see call/capacity), None before SIP starts."""
    messages: MessageStore | None = None
    """Messages callers left (see side/messages)."""
    embed: object = None
    """Callable: the KB's sentence embedder (texts -> unit vectors), once the models are loaded."""
    open_call: object = None
    """Coroutine function: run a WebSocket stream or browser call as a call (Agent.open_call), once SIP is up."""
    background: Executor | None = None
    """Where report work runs: behind every call's model work (None: the default thread pool)."""
    not_ready: dict[str, str] = field(default_factory=lambda: {"models": "loading", "kb": "not loaded",
                                                               "sip": "not started"})
    reindexed: object = field(default=lambda profiles: None)
    """Callable, on a worker thread after POST /kb/reindex with the profiles it re-indexed: record their index
    versions and tell the other agents on a shared database (side/kb_sync)."""

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


def create_app(state: SideState) -> FastAPI:
    docs = state.settings.http_docs
    app = FastAPI(title="Offline phone agent", docs_url="/docs" if docs else None, redoc_url=None,
                  openapi_url="/openapi.json" if docs else None)

    @app.middleware("http")
    async def cap_body(request: Request, call_next):
        length = request.headers.get("content-length")
        if length is not None and (not length.isdigit() or int(length) > MAX_BODY_BYTES):
            return JSONResponse({"detail": f"request body over {MAX_BODY_BYTES} bytes"}, status_code=413)
        if request.headers.get("transfer-encoding", "").lower() == "chunked":
            return JSONResponse({"detail": "chunked request bodies are not accepted"}, status_code=411)
        return await call_next(request)

    failures = AuthFailures()

    def refusal(client: str, given: bytes) -> tuple[int, str] | None:
        """Why an admin request from `client` presenting `given` is refused (HTTP status, reason); None when
        its token is right. Every surface (endpoints, pages, the media stream) is checked here."""
        token = state.settings.admin_token
        if not token:
            return 403, "admin endpoints are disabled: set AGENT_ADMIN_TOKEN to enable them"
        now = time.monotonic()
        if failures.blocked(client, now):
            return 429, "too many failed attempts; try again later"
        if not hmac.compare_digest(given, token.encode()):
            failures.failed(client, now)
            return 401, "a valid bearer token is required"
        return None

    def authorize(request: Request, challenge: str) -> None:
        client = request.client.host if request.client else "?"
        refused = refusal(client, presented_token(request.headers.get("authorization", "")))
        if refused is not None:
            status, reason = refused
            headers = {429: {"Retry-After": str(AUTH_BLOCK_S)}, 401: {"WWW-Authenticate": challenge}}.get(status)
            raise HTTPException(status, reason, headers=headers)

    def admin(request: Request) -> None:
        authorize(request, "Bearer")

    def admin_page(request: Request) -> None:
        """For pages a person opens in a browser: the browser asks for the token itself (any user name)."""
        authorize(request, 'Basic realm="phone agent", charset="UTF-8"')

    @app.get("/healthz")
    async def healthz() -> dict:
        return {"status": "alive"}

    build = installed_pjsua2()
    # Which SIP stack answers, and the calls it can hold at most (PyPI's wheel: 4).
    sip_build = {"version": build.version, "max_calls": build.max_calls, "from_source": build.from_source}

    @app.get("/readyz")
    async def readyz() -> JSONResponse:
        reasons = state.readiness()
        body: dict = {"ready": not reasons, "reasons": reasons, "spare_calls": state.spare_calls(),
                      "pjsua2": sip_build,
                      # Calls are still answered while the store is away; their records wait in order.
                      "records": "degraded" if state.metrics.store_degraded else "ok",
                      "kb_versions": {name: kb.index.snapshot.version for name, kb in (state.knowledge or {}).items()}}
        # Every agent's, when the records are shared. A probe must answer fast: a store known to be away is not
        # asked, and one that does not answer within a second only leaves this out.
        if not state.metrics.store_degraded:
            with contextlib.suppress(Exception):
                body["line_kb_versions"] = await asyncio.wait_for(asyncio.to_thread(state.store.kb_versions), 1)
        registration = state.registration()
        if registration is not None:
            body["registration"] = {"state": registration.state, "code": registration.code,
                                    "reason": registration.reason, "expires_s": registration.expires_s,
                                    "failures": registration.failures, "retry_in_s": registration.retry_in_s}
        return JSONResponse(body, status_code=503 if reasons else 200)

    @app.get("/metrics")
    async def metrics() -> PlainTextResponse:
        return PlainTextResponse(generate_latest(state.metrics.registry), media_type=CONTENT_TYPE_LATEST)

    @app.get("/metrics/summary")
    async def metrics_summary(format: str = Query("json", pattern="^(json|markdown)$")):  # noqa: A002
        summary = state.metrics.summary()
        if format == "markdown":
            return PlainTextResponse(summary_markdown(summary, state.settings.metrics_window_s),
                                     media_type="text/markdown")
        return {"window_s": state.settings.metrics_window_s, "stages": summary,
                "cpu_s_per_turn": state.metrics.cpu_per_turn()}

    @app.post("/kb/reindex", dependencies=[Depends(admin)])
    async def reindex(profile: str | None = Query(None, description="one dialplan profile; default: all")):
        """Re-index every profile's KB (or one): totals at the top level, each profile under `profiles`."""
        if state.knowledge is None:
            raise HTTPException(503, "the knowledge base is still loading")
        if profile is not None and profile not in state.knowledge:
            raise HTTPException(404, f"no profile {profile!r}; profiles: {', '.join(state.knowledge)}")
        names = [profile] if profile is not None else list(state.knowledge)
        loop = asyncio.get_running_loop()
        reports = {}
        for name in names:
            index = state.knowledge[name].index
            try:
                reports[name] = await loop.run_in_executor(None, lambda index=index: index.refresh(wait=False))
            except RefreshBusy:
                raise HTTPException(409, f"a re-index of {name!r} is already running") from None
        ok = all(r.ok for r in reports.values())
        body = {key: sum(getattr(r, key) for r in reports.values())
                for key in ("added", "changed", "deleted", "unchanged", "chunks")}
        prefix = len(state.knowledge) > 1
        body |= {"ok": ok, "duration_s": round(sum(r.seconds for r in reports.values()), 3),
                 "errors": {(f"{n}:{path}" if prefix else path): why for n, r in reports.items()
                            for path, why in r.rejected.items()},
                 "error": "; ".join((f"{n}: " if prefix else "") + r.error for n, r in reports.items() if r.error)
                 or None,
                 "profiles": {n: {"ok": r.ok, "added": r.added, "changed": r.changed, "deleted": r.deleted,
                                  "unchanged": r.unchanged, "chunks": r.chunks, "errors": r.rejected,
                                  "error": r.error} for n, r in reports.items()}}
        if ok:
            await loop.run_in_executor(None, state.reindexed, names)
        return JSONResponse(body, status_code=200 if ok else 500)

    async def unanswered_groups(days: int, limit: int, instance: str | None = None) -> tuple[int, list[dict]]:
        if state.embed is None:
            raise HTTPException(503, "the models are still loading")
        questions = await asyncio.to_thread(state.store.unanswered, time.time() - days * 86400, limit, instance)

        def grouped() -> list[dict]:
            if not questions:
                return []
            return group_by_meaning(questions, state.embed([q.text for q in questions]))

        groups = await asyncio.get_running_loop().run_in_executor(state.background, grouped)
        return len(questions), [{k: v for k, v in g.items() if k != "last_ts"} for g in groups]

    @app.get("/reports/unanswered", dependencies=[Depends(admin)])
    async def unanswered(days: int = Query(30, ge=1, le=3650), limit: int = Query(1000, ge=1, le=5000),
                         instance: str | None = INSTANCE) -> dict:
        """Questions the agent declined or asked to hear again, grouped by meaning, most frequent first."""
        count, groups = await unanswered_groups(days, limit, instance)
        return {"days": days, "questions": count, "groups": groups}

    @app.get("/dashboard", dependencies=[Depends(admin_page)])
    async def dashboard(calls: int = Query(100, ge=1, le=1000), instance: str | None = INSTANCE) -> HTMLResponse:
        """The owner's page: recent calls, messages, unanswered questions, latency and calls per hour."""
        recent = await asyncio.to_thread(state.store.recent, calls, True, instance)
        shared = await asyncio.to_thread(state.store.recorded, [c["id"] for c in recent]) \
            if state.settings.database_url else set()
        for call in recent:
            local = recording_path(state.settings.recordings_path, call["id"])
            if call["id"] in shared or await asyncio.to_thread(local.is_file):
                call["recording"] = f"/calls/{call['id']}/recording"
        messages = await asyncio.to_thread(state.messages.recent, 50, instance) if state.messages is not None else []
        _, groups = await unanswered_groups(30, 1000, instance)
        return HTMLResponse(render_dashboard(recent, messages, groups[:30], time.time()))

    @app.get("/messages", dependencies=[Depends(admin)])
    async def messages(limit: int = Query(100, ge=1, le=1000), instance: str | None = INSTANCE) -> dict:
        """Messages callers left, newest first, each with its transcript and the path of its audio."""
        found = await asyncio.to_thread(state.messages.recent, limit, instance) if state.messages is not None else []
        return {"messages": found}

    @app.get("/messages/{message_id}.wav", dependencies=[Depends(admin)])
    async def message_audio(message_id: str) -> Response:
        audio = await asyncio.to_thread(state.messages.audio, message_id) if state.messages is not None else None
        if audio is None:
            raise HTTPException(404, f"no message {message_id}")
        return Response(audio, media_type="audio/wav")

    @app.websocket("/ws/media")
    async def media_stream(websocket: WebSocket, to: str = "websocket", token: str = "") -> None:
        """A call as a PCM-over-WebSocket media stream (agent/stream/protocol.py); the token as a bearer
        header or `?token=`; `to` picks the dialplan profile as a dialled extension would."""
        client = websocket.client.host if websocket.client else "?"
        refused = refusal(client, token.encode() or presented_token(websocket.headers.get("authorization", "")))
        if refused is not None:  # closed before the handshake is accepted: the client sees HTTP 403
            await websocket.close(code=1008, reason=refused[1])
            return
        if state.open_call is None:
            await websocket.close(code=1013, reason="the agent is still starting")
            return
        await serve_stream(websocket, state.open_call, f"ws:{client}", to[:64])

    phone = BrowserPhone()

    def phone_gate(request: Request) -> None:
        if not state.settings.web_phone:
            raise HTTPException(404, "the browser phone is off: set AGENT_WEB_PHONE=true")
        if not ipaddress.ip_address(state.settings.http_host).is_loopback:
            admin_page(request)  # reachable from other machines: only with the token

    @app.get("/phone", dependencies=[Depends(phone_gate)])
    async def phone_page() -> HTMLResponse:
        """The browser phone: a page that calls the agent over WebRTC."""
        return HTMLResponse(PAGE)

    @app.post("/phone/offer", dependencies=[Depends(phone_gate)])
    async def phone_offer(request: Request, to: str = "browser") -> dict:
        """The page's SDP offer in, the agent's answer out; the call then runs until either side hangs up.
        `to` picks the dialplan profile as a dialled extension would."""
        if state.open_call is None:
            raise HTTPException(503, "the agent is still starting")
        if not state.spare_calls():  # before any media sockets are opened for it
            raise HTTPException(503, "busy: the agent is at its call limit")
        try:
            offer = await request.json()
        except ValueError:
            raise HTTPException(400, "the body must be JSON: {\"type\": \"offer\", \"sdp\": \"...\"}") from None
        client = request.client.host if request.client else "?"
        try:
            return await phone.call(offer, state.open_call, f"browser:{client}", to[:64])
        except OfferError as exc:
            raise HTTPException(400, str(exc)) from None
        except CallRefused as exc:
            raise HTTPException(503, str(exc)) from None

    @app.get("/calls", dependencies=[Depends(admin)])
    async def calls(limit: int = Query(50, ge=1, le=500), instance: str | None = INSTANCE) -> dict:
        """Every agent's calls on a shared store, newest first; `instance`: only that agent's."""
        return {"calls": await asyncio.to_thread(state.store.recent, limit, False, instance)}

    @app.get("/calls/{call_id}/recording", dependencies=[Depends(admin)])
    async def call_recording(call_id: str) -> Response:
        """The whole call, caller left and agent right (AGENT_RECORD_CALLS), as a WAV."""
        path = recording_path(state.settings.recordings_path, call_id)
        if not CALL_ID.match(call_id):
            raise HTTPException(404, f"no recording of call {call_id}")
        if await asyncio.to_thread(path.is_file):
            return FileResponse(path, media_type="audio/wav")
        # Another agent of the line took the call: its copy is in the shared database.
        shared = await asyncio.to_thread(state.store.recording, call_id) if state.settings.database_url else None
        if shared is None:
            raise HTTPException(404, f"no recording of call {call_id}")
        return Response(shared, media_type="audio/wav")

    @app.get("/calls/{call_id}", dependencies=[Depends(admin)])
    async def call(call_id: str) -> dict:
        found = await asyncio.to_thread(state.store.get, call_id)
        if found is None:
            raise HTTPException(404, f"no call {call_id}")
        return found

    return app
