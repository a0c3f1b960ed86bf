"""One call from the browser phone (page.html) over WebRTC with aiortc: the CallTransport a call session
talks to.

The browser's audio (Opus at 48 kHz, or PCMU) arrives decoded by aiortc and is resampled once to 16 kHz;
the agent's voice leaves from the same playout queue as on a SIP line, one 20 ms frame per tick, so a
barge-in that clears the queue is silence from the next frame. A data channel the page opens carries the
live transcript to it, and its keypad and hang-up button back.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import fractions
import json
import logging
import uuid

import aioice.ice
import av
import numpy as np
from aiortc import MediaStreamTrack, RTCConfiguration, RTCPeerConnection, RTCSessionDescription
from aiortc.mediastreams import MediaStreamError

from agent.audio.pcm import StreamResampler, rms
from agent.audio.playout import Playout
from agent.browser.offer import OfferError, answer_codec, check_offer
from agent.call.transport import RATE, counted
from agent.logs import event
from agent.stream.protocol import transcript_message

log = logging.getLogger(__name__)

FRAME_MS = 20
FRAME_SAMPLES = RATE * FRAME_MS // 1000
DTMF_DIGITS = set("0123456789*#")


def gather_on(address: str) -> None:
    """Offer media candidates on `address` only ('': every interface but loopback, aioice's own choice).
    aioice has no option for this, so its address lookup is replaced for the process; the agent is one
    process with one browser phone, so that is the whole of its use."""
    if address:
        aioice.ice.get_host_addresses = lambda use_ipv4, use_ipv6: [address]


class PlayoutTrack(MediaStreamTrack):
    """A playout queue as an audio track (the agent's voice here; a scripted caller's in eval.kit.rtc_caller),
    paced by the loop's clock (a late tick is caught up, not drifted); `on_frame(pcm)` sees each frame sent."""

    kind = "audio"

    def __init__(self, playout: Playout, on_frame) -> None:
        super().__init__()
        self._playout, self._on_frame = playout, on_frame
        self._start: float | None = None
        self._ticks = 0

    async def recv(self) -> av.AudioFrame:
        loop = asyncio.get_running_loop()
        if self._start is None:
            self._start = loop.time()
        await asyncio.sleep(max(0.0, self._start + self._ticks * FRAME_MS / 1000 - loop.time()))
        pcm, _ = self._playout.pop()
        self._on_frame(pcm)
        frame = av.AudioFrame.from_ndarray(pcm.reshape(1, -1), format="s16", layout="mono")
        frame.sample_rate, frame.pts, frame.time_base = RATE, self._ticks * FRAME_SAMPLES, fractions.Fraction(1, RATE)
        self._ticks += 1
        return frame


def mono_16k(frame: av.AudioFrame, resampler: StreamResampler | None) -> tuple[np.ndarray, StreamResampler | None]:
    """A decoded frame (packed s16, any channel count and rate) as 16 kHz mono; the resampler is made
    for the first frame's rate and kept."""
    channels = len(frame.layout.channels)
    pcm = frame.to_ndarray().reshape(-1, channels)
    mono = pcm[:, 0] if channels == 1 else pcm.mean(axis=1).astype(np.int16)
    if frame.sample_rate == RATE:
        return mono, resampler
    resampler = resampler or StreamResampler(frame.sample_rate, RATE)
    return resampler.push(mono), resampler


class BrowserCall:
    """A CallTransport over one RTCPeerConnection."""

    can_transfer = False
    kind = "webrtc"

    def __init__(self, remote: str, dialed: str) -> None:
        self.sip_call_id = f"webrtc-{uuid.uuid4().hex[:16]}"
        self.remote, self.dialed = remote, dialed
        self.playout = Playout(FRAME_SAMPLES)
        self.codec, self.clock_rate = "", 0
        # No STUN server: host candidates reach a browser on this machine or its LAN (see README).
        self._pc = RTCPeerConnection(RTCConfiguration(iceServers=[]))
        self._inbound: asyncio.Future[MediaStreamTrack] = asyncio.get_running_loop().create_future()
        self._channel = None
        self._received = 0
        self._last_out_rms = 0.0
        self._closed = asyncio.Event()
        self._why_closed = ""
        self.running = asyncio.Event()
        self._session = None
        self._pc.on("track", self._on_track)
        self._pc.on("datachannel", self._on_datachannel)
        self._pc.on("connectionstatechange", self._on_state)

    async def answer(self, offer: dict) -> dict:
        """The SDP answer to the page's offer, and the call's identifier (its call record's `sip_call_id`);
        raises OfferError for an offer the agent cannot take."""
        sdp = check_offer(offer)
        try:
            await self._pc.setRemoteDescription(RTCSessionDescription(sdp=sdp, type="offer"))
            self._pc.addTrack(PlayoutTrack(self.playout, self._sent))
            await self._pc.setLocalDescription(await self._pc.createAnswer())
        except Exception as exc:  # aiortc reports a bad offer as ValueError, OperationError, AssertionError...
            raise OfferError(f"the SDP offer could not be used: {type(exc).__name__} {str(exc)[:120]}") from None
        self.codec, self.clock_rate = answer_codec(self._pc.localDescription.sdp)
        return {"sdp": self._pc.localDescription.sdp, "type": self._pc.localDescription.type,
                "call": self.sip_call_id}

    async def close(self) -> None:
        await self._pc.close()

    # --- CallTransport
    def hang_up(self) -> None:
        self._close("agent hung up")

    def transfer(self, target: str) -> None:
        raise NotImplementedError("a browser call cannot be transferred")

    def packets_received(self) -> concurrent.futures.Future:
        return counted(None if self._closed.is_set() else self._received)

    def said(self, role: str, text: str) -> None:
        self._send(transcript_message(role, text))

    # --- the connection
    def _close(self, why: str) -> None:
        """The first reason given is why the call ended."""
        self._why_closed = self._why_closed or why
        self._closed.set()

    def _send(self, message: str) -> None:
        if self._channel is not None and self._channel.readyState == "open":
            self._channel.send(message)

    def _sent(self, pcm: np.ndarray) -> None:
        self._last_out_rms = rms(pcm)

    def _on_track(self, track: MediaStreamTrack) -> None:
        if track.kind == "audio" and not self._inbound.done():
            self._inbound.set_result(track)

    def _on_datachannel(self, channel) -> None:
        self._channel = channel
        channel.on("message", self._on_message)

    def _on_message(self, message) -> None:
        """The page's keypad ({"type": "dtmf", "digit": "5"}) and hang-up button ({"type": "hangup"})."""
        try:
            parsed = json.loads(message) if isinstance(message, str) else None
        except ValueError:
            parsed = None
        if not isinstance(parsed, dict):
            return
        if parsed.get("type") == "hangup":
            self._close("caller hung up")
        elif parsed.get("type") == "dtmf" and parsed.get("digit") in DTMF_DIGITS and self._session is not None:
            self._session.on_dtmf(parsed["digit"])

    def _on_state(self) -> None:
        if self._pc.connectionState in ("failed", "closed"):
            self._close("connection lost")

    async def run(self, session) -> str:
        """Carry the call until either side ends it; returns why it ended."""
        self._session = session
        self.running.set()
        receiving = asyncio.create_task(self._receive(session))
        closed = asyncio.create_task(self._closed.wait())
        done, _ = await asyncio.wait([receiving, closed], return_when=asyncio.FIRST_COMPLETED)
        if receiving in done and receiving.exception() is not None:
            event(log, "browser.media_failed", logging.WARNING, call=self.sip_call_id,
                  error=repr(receiving.exception())[:160])
            self._close("connection lost")
        self._close("caller hung up")  # the browser's track ended: it hung up or went away
        reason = self._why_closed
        receiving.cancel()
        closed.cancel()
        session.on_ended(reason)
        self._send(json.dumps({"type": "hangup", "reason": reason}))
        await asyncio.sleep(0.1)  # let the hang-up message leave before the connection closes
        await self._pc.close()
        event(log, "browser.closed", call=self.sip_call_id, reason=reason)
        return reason

    async def _receive(self, session) -> None:
        track = await self._inbound
        resampler: StreamResampler | None = None
        pending = np.zeros(0, dtype=np.int16)
        while True:
            try:
                frame = await track.recv()
            except MediaStreamError:
                return  # the browser's track ended: it hung up or went away
            self._received += 1
            pcm, resampler = mono_16k(frame, resampler)
            pending = np.concatenate([pending, pcm])
            while len(pending) >= FRAME_SAMPLES:
                session.on_frame(pending[:FRAME_SAMPLES], self._last_out_rms)
                pending = pending[FRAME_SAMPLES:]
