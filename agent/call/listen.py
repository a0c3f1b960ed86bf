"""The caller's side of the line: 20 ms frames from the transport, out as 32 ms windows with the probability
that the caller (not the agent's own voice coming back) is speaking in each.

Frames arrive on the event loop (the transport hops them there) and wait in a bounded queue; the VAD runs on
its own executor so that a busy model pool never delays any call's turn-taking.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Callable
from concurrent.futures import Executor
from typing import NamedTuple

import numpy as np

from agent.audio.pcm import int16_to_float, rms
from agent.call.echo import EchoGate
from agent.speech.vad import WINDOW, SileroVad

MAX_QUEUED_FRAMES = 250
"""5 s of 20 ms frames waiting for the audio path; beyond that frames are dropped (and counted)."""


class Window(NamedTuple):
    pcm: np.ndarray
    """int16, 16 kHz, WINDOW samples."""
    samples: np.ndarray
    """The same as float32."""
    speech: float
    """The VAD's probability that this is the caller speaking; 0 when it can be the agent's own echo."""


class Listener:
    def __init__(self, vad: SileroVad, vad_pool: Executor, echo_gate_db: float) -> None:
        self._vad, self._vad_pool = vad, vad_pool
        self._gate = EchoGate(echo_gate_db)
        self._frames: asyncio.Queue[tuple[np.ndarray, float] | None] = asyncio.Queue()
        self._pending = np.zeros(0, dtype=np.int16)
        self.dropped_frames = 0

    def push(self, pcm: np.ndarray, outbound_rms: float) -> None:
        """One frame from the line, and how loud the agent's frame sent at the same time was. A stalled audio
        path drops frames rather than piling them up forever."""
        if self._frames.qsize() < MAX_QUEUED_FRAMES:
            self._frames.put_nowait((pcm, outbound_rms))
        else:
            self.dropped_frames += 1

    def close(self) -> None:
        """The call is over: `windows` ends once the frames before this are heard."""
        self._frames.put_nowait(None)

    def forget_echo(self) -> None:
        """The caller talked over the agent: what was played before is no echo of what comes now."""
        self._gate.forget()

    async def windows(self, held: Callable[[], bool]) -> AsyncIterator[Window]:
        """The caller's windows until `close`; nothing while the call is `held` (a held line carries music or
        nothing, never the caller)."""
        loop = asyncio.get_running_loop()
        while (item := await self._frames.get()) is not None:
            pcm, outbound_rms = item
            self._gate.played(outbound_rms)
            if held():
                continue
            self._pending = np.concatenate([self._pending, pcm])
            while len(self._pending) >= WINDOW:
                window, self._pending = self._pending[:WINDOW], self._pending[WINDOW:]
                samples = int16_to_float(window)
                speech = await loop.run_in_executor(self._vad_pool, self._vad.window_probability, samples)
                if not self._gate.admits(rms(window)):
                    speech = 0.0  # the agent's own voice coming back (or its tail): not the caller
                yield Window(window, samples, speech)
