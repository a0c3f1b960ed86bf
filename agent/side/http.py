"""The side app: health, readiness, metrics, KB re-indexing and call records over HTTP (FastAPI).

Bound to loopback by default. /healthz, /readyz and /metrics are open; /kb/reindex, /calls*, /messages*,
/reports/* and /dashboard need `Authorization: Bearer $AGENT_ADMIN_TOKEN` (or HTTP Basic with the token as
password, which is how a browser opening /dashboard sends it), and are refused (403) while no token is set.
The browser phone (/phone) is off unless AGENT_WEB_PHONE; beyond loopback it needs the token too.
The routes are in agent/side/routes/, one module per area.
"""

from __future__ import annotations

from fastapi import FastAPI, Request
from fastapi.responses import JSONResponse

from agent.side.routes import health, kb, phone, records
from agent.side.state import Guard, SideState

MAX_BODY_BYTES = 64 * 1024


def create_app(state: SideState) -> FastAPI:
    docs = state.config.http_docs
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

    guard = Guard(state.config.admin_token)
    for routes in (health.routes(state), kb.routes(state, guard), records.routes(state, guard),
                   phone.routes(state, guard)):
        app.include_router(routes)
    return app
