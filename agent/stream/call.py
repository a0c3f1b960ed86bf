"""One call over a WebSocket media stream (see protocol): the CallTransport a call session talks to.

The agent's voice goes out in real time, one 20 ms frame per tick of the loop's clock, and only while it
speaks: between answers nothing is sent, so a harness that waits for the end of the agent's audio sees it
end (voicebench's runner ends a turn there; a stream of silence never ended). The caller's audio is
resampled once to 16 kHz and handed to the session frame by frame, as the SIP port does.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import logging
import uuid

import numpy as np
from starlette.websockets import WebSocket, WebSocketDisconnect

from agent.audio.pcm import StreamResampler, bytes_to_int16, rms
from agent.audio.playout import Playout
from agent.call.transport import RATE, counted
from agent.logs import event
from agent.stream.protocol import StreamError, check_audio, clear_message, parse_start, transcript_message

log = logging.getLogger(__name__)

FRAME_MS = 20
FRAME_SAMPLES = RATE * FRAME_MS // 1000


class ClearingPlayout(Playout):
    """A playout queue that tells the client when queued speech is dropped (barge-in)."""

    def __init__(self, frame_samples: int, on_clear) -> None:
        super().__init__(frame_samples)
        self._on_clear = on_clear

    def clear(self) -> int:
        dropped = super().clear()
        if dropped:
            self._on_clear()
        return dropped


class StreamCall:
    """A CallTransport over one accepted WebSocket."""

    can_transfer = False
    kind = "websocket"
    codec, clock_rate = "L16", RATE
    """What the session records: 16-bit PCM, handed to it at 16 kHz whatever rate the client streams."""

    def __init__(self, websocket: WebSocket, remote: str, dialed: str) -> None:
        self.sip_call_id = f"ws-{uuid.uuid4().hex[:16]}"
        self.remote, self.dialed = remote, dialed
        self.playout = ClearingPlayout(FRAME_SAMPLES, lambda: self._send(clear_message()))
        self.rate = 16000
        self._websocket = websocket
        self._outbox: asyncio.Queue[str] = asyncio.Queue()
        self._received = 0
        self._closed = asyncio.Event()
        self._last_out_rms = 0.0

    # --- CallTransport
    def hang_up(self) -> None:
        self._closed.set()

    def transfer(self, target: str) -> None:
        raise NotImplementedError("a WebSocket stream cannot be transferred")

    def packets_received(self) -> concurrent.futures.Future:
        return counted(None if self._closed.is_set() else self._received)

    def said(self, role: str, text: str) -> None:
        self._send(transcript_message(role, text))

    # --- the connection
    def _send(self, text: str) -> None:
        self._outbox.put_nowait(text)

    async def run(self, session) -> str:
        """Stream until either side ends the call; returns why it ended."""
        tasks = [asyncio.create_task(self._receive(session)), asyncio.create_task(self._play()),
                 asyncio.create_task(self._send_texts()), asyncio.create_task(self._closed.wait())]
        done, pending = await asyncio.wait(tasks, return_when=asyncio.FIRST_COMPLETED)
        for task in pending:
            task.cancel()
        reason, error = "agent hung up", None
        for task in done:
            if task.exception() is not None:
                error = task.exception()
                reason = "protocol error" if isinstance(error, StreamError) else "connection lost"
            elif isinstance(task.result(), str):
                reason = task.result()
        self._closed.set()
        session.on_ended(reason)
        if isinstance(error, StreamError):
            raise error
        return reason

    async def _receive(self, session) -> str:
        inbound: StreamResampler | None = None
        pending = np.zeros(0, dtype=np.int16)
        while True:
            message = await self._websocket.receive()
            if message["type"] == "websocket.disconnect":
                return "caller hung up"
            if message.get("text") is not None:
                if not self._received and inbound is None:  # only the first message may set the rate
                    self.rate = parse_start(message["text"])
            elif message.get("bytes") is not None:
                check_audio(message["bytes"])
                inbound = inbound or StreamResampler(self.rate, RATE)
                self._received += 1
                pcm = bytes_to_int16(message["bytes"])
                pending = np.concatenate([pending, inbound.push(pcm) if self.rate != RATE else pcm])
                while len(pending) >= FRAME_SAMPLES:
                    session.on_frame(pending[:FRAME_SAMPLES], self._last_out_rms)
                    pending = pending[FRAME_SAMPLES:]

    async def _play(self) -> None:
        """One frame of the agent's voice every 20 ms by the loop's clock (a late tick is caught up, not
        drifted); a tick with nothing queued sends nothing."""
        loop = asyncio.get_running_loop()
        outbound: StreamResampler | None = None
        start, ticks = loop.time(), 0
        while True:
            frame, speech = self.playout.pop()
            self._last_out_rms = rms(frame) if speech else 0.0
            if speech:
                if self.rate != RATE:
                    outbound = outbound or StreamResampler(RATE, self.rate)
                    frame = outbound.push(frame)
                await self._websocket.send_bytes(frame.astype("<i2").tobytes())
            else:
                outbound = None  # the next answer starts afresh (its sub-millisecond tail is not held over)
            ticks += 1
            await asyncio.sleep(max(0.0, start + ticks * FRAME_MS / 1000 - loop.time()))

    async def _send_texts(self) -> None:
        while True:
            await self._websocket.send_text(await self._outbox.get())


async def serve_stream(websocket: WebSocket, open_call, remote: str, dialed: str) -> None:
    """Accept a stream, hand it to the agent (`open_call(call)` runs the call, or returns why it cannot be
    taken), close it with the reason."""
    await websocket.accept()
    call = StreamCall(websocket, remote, dialed)
    try:
        refused = await open_call(call)
        if refused:
            await websocket.close(code=1013, reason=refused)  # try again later
            return
        await websocket.close(code=1000)
    except StreamError as exc:
        event(log, "stream.refused", reason=str(exc)[:120])
        await websocket.close(code=1003, reason=str(exc)[:120])
    except (WebSocketDisconnect, RuntimeError):
        pass  # the client went away; the session has been told
