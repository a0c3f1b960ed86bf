"""Calls that do not come over SIP: the PCM-over-WebSocket media stream (/ws/media) and the browser phone
(/phone, WebRTC). Both run the same call core as a SIP call (Agent.open_call)."""

from __future__ import annotations

import ipaddress

from fastapi import APIRouter, Depends, HTTPException, Request, WebSocket
from fastapi.responses import HTMLResponse

from agent.browser.offer import OfferError
from agent.browser.phone import PAGE, BrowserPhone, CallRefused
from agent.side.auth import presented_token
from agent.side.state import Guard, SideState
from agent.stream.call import serve_stream


def routes(state: SideState, guard: Guard) -> APIRouter:
    router = APIRouter()
    phone = BrowserPhone()

    @router.websocket("/ws/media")
    async def media_stream(websocket: WebSocket, to: str = "websocket", token: str = "") -> None:
        """A call as a PCM-over-WebSocket media stream (agent/stream/protocol.py); the token as a bearer
        header or `?token=`; `to` picks the dialplan profile as a dialled extension would."""
        client = websocket.client.host if websocket.client else "?"
        refused = guard.refusal(client, token.encode() or presented_token(websocket.headers.get("authorization", "")))
        if refused is not None:  # closed before the handshake is accepted: the client sees HTTP 403
            await websocket.close(code=1008, reason=refused[1])
            return
        if state.open_call is None:
            await websocket.close(code=1013, reason="the agent is still starting")
            return
        await serve_stream(websocket, state.open_call, f"ws:{client}", to[:64])

    def phone_gate(request: Request) -> None:
        if not state.config.web_phone:
            raise HTTPException(404, "the browser phone is off: set AGENT_WEB_PHONE=true")
        if not ipaddress.ip_address(state.config.http_host).is_loopback:
            guard.admin_page(request)  # reachable from other machines: only with the token

    @router.get("/phone", dependencies=[Depends(phone_gate)])
    async def phone_page() -> HTMLResponse:
        """The browser phone: a page that calls the agent over WebRTC."""
        return HTMLResponse(PAGE)

    @router.post("/phone/offer", dependencies=[Depends(phone_gate)])
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

    return router
