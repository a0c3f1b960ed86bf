"""Open to anyone who reaches the side app: liveness, readiness (what is not ready, and why) and metrics."""

from __future__ import annotations

import asyncio
import contextlib

from fastapi import APIRouter, Query
from fastapi.responses import JSONResponse, PlainTextResponse
from prometheus_client import CONTENT_TYPE_LATEST, generate_latest

from agent.side.metrics import summary_markdown
from agent.side.state import SideState
from agent.sip.build_info import installed as installed_pjsua2


def routes(state: SideState) -> APIRouter:
    router = APIRouter()
    build = installed_pjsua2()
    # Which SIP stack answers, and the calls it can hold at most (PyPI's wheel: 4).
    sip_build = {"version": build.version, "max_calls": build.max_calls, "from_source": build.from_source}

    @router.get("/healthz")
    async def healthz() -> dict:
        return {"status": "alive"}

    @router.get("/readyz")
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

    @router.get("/metrics")
    async def metrics() -> PlainTextResponse:
        return PlainTextResponse(generate_latest(state.metrics.registry), media_type=CONTENT_TYPE_LATEST)

    @router.get("/metrics/summary")
    async def metrics_summary(format: str = Query("json", pattern="^(json|markdown)$")):  # noqa: A002
        summary = state.metrics.summary()
        if format == "markdown":
            return PlainTextResponse(summary_markdown(summary, state.config.metrics_window_s),
                                     media_type="text/markdown")
        return {"window_s": state.config.metrics_window_s, "stages": summary,
                "cpu_s_per_turn": state.metrics.cpu_per_turn()}

    return router
