"""One call's replies in the making: at most one prepared during a pause in the caller's speech, and the one for
the turn that ended (the pause's, adopted when the caller stayed quiet, else a fresh one).

Holds the preparations' tasks and nothing of the call: what is asked for, and when, is the session's (it is told
by the call core); what was prepared is handed back for the session to act on.
"""

from __future__ import annotations

import asyncio
import threading

import numpy as np

from agent.call.commands import Clarified
from agent.call.understanding.prepare import Pipeline, Prepared, prepare, render, understand_utterance
from agent.call.workers import Busy
from agent.knowledge.memory import CallMemory


class Replies:
    def __init__(self, pipeline: Pipeline, memory: CallMemory, deadline_s: float) -> None:
        """`deadline_s`: the longest a preparation may take before the turn fails (a model that hangs must not
        silence the call)."""
        self._pipeline, self._memory, self._deadline_s = pipeline, memory, deadline_s
        self._speculative: tuple[int, asyncio.Task, threading.Event, asyncio.Future] | None = None
        self._hard_to_hear = False
        """A turn of this call left the first recogniser in doubt: from then on the second starts beside it."""

    def speculate(self, window: int, audio: np.ndarray, clarified: Clarified) -> asyncio.Future:
        """Prepare the reply to the utterance so far (the pause after `window`) while the hangover runs: used if
        the caller stays quiet, dropped if not. The future holds what was heard and understood as soon as that is
        known, before the voice renders (cancelled if the preparation is dropped first)."""
        self.drop_speculation()
        cancelled, understood = threading.Event(), asyncio.get_running_loop().create_future()
        task = asyncio.create_task(self._speculate(audio, clarified, cancelled, understood))
        self._speculative = (window, task, cancelled, understood)
        return understood

    async def _speculate(self, audio: np.ndarray, clarified: Clarified, cancelled: threading.Event,
                         understood: asyncio.Future) -> Prepared:
        prepared = await understand_utterance(self._pipeline, self._memory, audio, clarified, speculative=True,
                                              hard_to_hear=self._hard_to_hear)
        if not understood.done():
            understood.set_result(prepared)
        return await render(self._pipeline, self._memory, prepared, cancelled, speculative=True)

    def take(self, window: int, audio: np.ndarray, clarified: Clarified) -> tuple[asyncio.Task, threading.Event]:
        """The preparation of the reply to the turn that ended with the pause after `window` (the speculative one,
        when it was for this pause), and the event that stops its synthesis."""
        if self._speculative is not None and self._speculative[0] == window:
            _, task, cancelled, _ = self._speculative
            self._speculative = None
            return task, cancelled
        self.drop_speculation()
        cancelled = threading.Event()
        return asyncio.create_task(prepare(self._pipeline, self._memory, audio, cancelled, clarified,
                                           hard_to_hear=self._hard_to_hear)), cancelled

    async def ready(self, preparing: asyncio.Task, audio: np.ndarray, clarified: Clarified,
                    cancelled: threading.Event) -> Prepared:
        """The turn's transcript, reply and first sentence. Past the deadline this raises TimeoutError."""
        prepared = await asyncio.wait_for(preparing, self._deadline_s)
        if prepared.failed is not None and isinstance(prepared.failed[1], Busy):
            # Prepared during the pause while the workers were busy, and refused: now it is urgent (a transcript
            # it did make is kept).
            prepared = await asyncio.wait_for(prepare(self._pipeline, self._memory, audio, cancelled, clarified,
                                                      heard=prepared.transcript), self._deadline_s)
        self._hard_to_hear = self._hard_to_hear or prepared.heard_twice
        return prepared

    def drop_speculation(self) -> None:
        if self._speculative is not None:
            _, task, cancelled, understood = self._speculative
            cancelled.set()
            understood.cancel()
            if task.done() and not task.cancelled():
                task.result().close()  # its LLM phrasing, if it asked for one
            task.cancel()
            self._speculative = None
