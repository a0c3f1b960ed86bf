"""POST /kb/reindex: the owner's documents read again, every dialplan profile's or one's."""

from __future__ import annotations

import asyncio

from fastapi import APIRouter, Depends, HTTPException, Query
from fastapi.responses import JSONResponse

from agent.knowledge.index import RefreshBusy
from agent.side.state import Guard, SideState

COUNTS = ("added", "changed", "deleted", "unchanged", "chunks")


def routes(state: SideState, guard: Guard) -> APIRouter:
    router = APIRouter()

    @router.post("/kb/reindex", dependencies=[Depends(guard.admin)])
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
        body = {key: sum(getattr(r, key) for r in reports.values()) for key in COUNTS}
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

    return router
