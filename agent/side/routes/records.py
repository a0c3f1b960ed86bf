"""What the owner reads, with the admin token: calls and their recordings, messages left, unanswered questions
grouped by meaning, and the dashboard that shows them all."""

from __future__ import annotations

import asyncio
import re
import time

from fastapi import APIRouter, Depends, HTTPException, Query
from fastapi.responses import FileResponse, HTMLResponse, Response

from agent.side.dashboard import render_dashboard
from agent.side.recordings import recording_path
from agent.side.state import INSTANCE, Guard, SideState
from agent.side.unanswered import group_by_meaning

CALL_ID = re.compile(r"^[0-9a-f]{16}$")


def routes(state: SideState, guard: Guard) -> APIRouter:
    router = APIRouter()
    _owner_routes(router, state, guard)
    _call_routes(router, state, [Depends(guard.admin)])
    return router


def _owner_routes(router: APIRouter, state: SideState, guard: Guard) -> None:
    """What callers left and asked: messages, unanswered questions, and the dashboard."""
    admin, page = [Depends(guard.admin)], [Depends(guard.admin_page)]

    async def unanswered_groups(days: int, limit: int, instance: str | None = None) -> tuple[int, list[dict]]:
        if state.embed is None:
            raise HTTPException(503, "the models are still loading")
        embed = state.embed
        questions = await asyncio.to_thread(state.store.unanswered, time.time() - days * 86400, limit, instance)

        def grouped() -> list[dict]:
            return group_by_meaning(questions, embed([q.text for q in questions])) if questions else []

        groups = await asyncio.get_running_loop().run_in_executor(state.background, grouped)
        return len(questions), [{k: v for k, v in g.items() if k != "last_ts"} for g in groups]

    @router.get("/reports/unanswered", dependencies=admin)
    async def unanswered(days: int = Query(30, ge=1, le=3650), limit: int = Query(1000, ge=1, le=5000),
                         instance: str | None = INSTANCE) -> dict:
        """Questions the agent declined or asked to hear again, grouped by meaning, most frequent first."""
        count, groups = await unanswered_groups(days, limit, instance)
        return {"days": days, "questions": count, "groups": groups}

    @router.get("/dashboard", dependencies=page)
    async def dashboard(calls: int = Query(100, ge=1, le=1000), instance: str | None = INSTANCE) -> HTMLResponse:
        """The owner's page: recent calls, messages, unanswered questions, latency and calls per hour."""
        recent = await asyncio.to_thread(state.store.recent, calls, True, instance)
        shared = await asyncio.to_thread(state.store.recorded, [c["id"] for c in recent]) \
            if state.config.shared_records else set()
        for call in recent:
            local = recording_path(state.config.recordings_path, call["id"])
            if call["id"] in shared or await asyncio.to_thread(local.is_file):
                call["recording"] = f"/calls/{call['id']}/recording"
        messages = await asyncio.to_thread(state.messages.recent, 50, instance) if state.messages is not None else []
        _, groups = await unanswered_groups(30, 1000, instance)
        return HTMLResponse(render_dashboard(recent, messages, groups[:30], time.time()))

    @router.get("/messages", dependencies=admin)
    async def messages(limit: int = Query(100, ge=1, le=1000), instance: str | None = INSTANCE) -> dict:
        """Messages callers left, newest first, each with its transcript and the path of its audio."""
        found = await asyncio.to_thread(state.messages.recent, limit, instance) if state.messages is not None else []
        return {"messages": found}

    @router.get("/messages/{message_id}.wav", dependencies=admin)
    async def message_audio(message_id: str) -> Response:
        audio = await asyncio.to_thread(state.messages.audio, message_id) if state.messages is not None else None
        if audio is None:
            raise HTTPException(404, f"no message {message_id}")
        return Response(audio, media_type="audio/wav")



def _call_routes(router: APIRouter, state: SideState, admin: list) -> None:
    """The calls' records, and their recordings."""

    @router.get("/calls", dependencies=admin)
    async def calls(limit: int = Query(50, ge=1, le=500), instance: str | None = INSTANCE) -> dict:
        """Every agent's calls on a shared store, newest first; `instance`: only that agent's."""
        return {"calls": await asyncio.to_thread(state.store.recent, limit, False, instance)}

    @router.get("/calls/{call_id}/recording", dependencies=admin)
    async def call_recording(call_id: str) -> Response:
        """The whole call, caller left and agent right (AGENT_RECORD_CALLS), as a WAV."""
        if not CALL_ID.match(call_id):
            raise HTTPException(404, f"no recording of call {call_id}")
        path = recording_path(state.config.recordings_path, call_id)
        if await asyncio.to_thread(path.is_file):
            return FileResponse(path, media_type="audio/wav")
        # Another agent of the line took the call: its copy is in the shared database.
        shared = await asyncio.to_thread(state.store.recording, call_id) if state.config.shared_records else None
        if shared is None:
            raise HTTPException(404, f"no recording of call {call_id}")
        return Response(shared, media_type="audio/wav")

    @router.get("/calls/{call_id}", dependencies=admin)
    async def call(call_id: str) -> dict:
        found = await asyncio.to_thread(state.store.get, call_id)
        if found is None:
            raise HTTPException(404, f"no call {call_id}")
        return found
