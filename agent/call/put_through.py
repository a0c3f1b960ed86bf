"""Putting the caller through to a person, the I/O side: a blind transfer (REFER) followed to its final status, or
a warm one, the caller holding to a soft tone while the agent finds someone who takes the call (warm_transfer).
Each says what became of it and records it; what follows is the call core's to decide (the session tells it).
"""

from __future__ import annotations

import asyncio
import functools
import logging

from agent.call.record import CallRecord, CallReporter
from agent.call.transport import CallTransport
from agent.call.understanding.prepare import Pipeline
from agent.call.understanding.transfer import TRANSFER_TIMEOUT_S, TransferResult, transfer_result
from agent.call.warm_transfer import PersonLine, WarmTransfer, WarmTransferConfig, announcement, hold
from agent.call.workers import off_loop
from agent.logs import event
from agent.speech.asr import words

log = logging.getLogger(__name__)


class PutThrough:
    def __init__(self, leg: CallTransport, record: CallRecord, reporter: CallReporter, pipeline: Pipeline,
                 warm: WarmTransferConfig | None = None) -> None:
        """`warm`: who the agent calls itself; None: the caller is REFERred to the target (a blind transfer)."""
        self._leg, self._record, self._reporter, self._pipeline, self._warm = leg, record, reporter, pipeline, warm
        self._final: asyncio.Future | None = None
        self._person = None
        """The person's leg, while the agent bridges the caller to them."""

    @property
    def is_warm(self) -> bool:
        """Whether the agent calls the person itself (a warm transfer)."""
        return self._warm is not None

    async def put(self, target: str) -> tuple[bool, PersonLine | None]:
        """Put the caller through, blind to `target` or warm as configured: whether someone took the call, and
        the line to them when the agent bridges it."""
        if self._warm is None:
            return await self.blind(target), None
        taken = await self.warm(self._warm)
        if taken is None:
            return False, None
        self._person, line = taken
        return True, line

    def close(self) -> None:
        """The call ended: the person's leg, if any, is hung up."""
        if self._person is not None:
            self._person.hang_up()

    def status(self, status: int, status_line: str, final: bool) -> None:
        """A progress report on the blind transfer (a NOTIFY), on the event loop."""
        result = transfer_result(status, final)
        if result is not TransferResult.PENDING and self._final is not None and not self._final.done():
            self._final.set_result((result, status_line))

    async def blind(self, target: str) -> bool:
        """REFER the caller to `target` and follow the progress until its final status (or the timeout): whether
        the person answered."""
        self._final = asyncio.get_running_loop().create_future()
        self._leg.transfer(target)
        try:
            result, status = await asyncio.wait_for(self._final, TRANSFER_TIMEOUT_S)
        except TimeoutError:
            result, status = TransferResult.FAILED, "no final status"
        event(log, "call.transfer", call=self._leg.sip_call_id, result=result.value, status=status)
        self._record.transfers.append({"to": target, "mode": "blind", "result": result.value})
        self._reporter.transfer(self._record, result.value, target)
        return result is TransferResult.ANSWERED

    async def warm(self, config: WarmTransferConfig) -> tuple[object, PersonLine] | None:
        """The caller holds while the agent calls each person in turn: the leg and line of the one who took the
        call, or None."""
        holding = asyncio.create_task(hold(self._leg.playout))
        models = self._pipeline.models
        try:
            result, person, line, target = await WarmTransfer(
                config, self._leg, off_loop(models, self._pipeline.voice.speak),
                off_loop(models, functools.partial(words, self._pipeline.transcriber)), self._leg.sip_call_id).run(
                self._briefing(), self._record.transfers)
        finally:
            holding.cancel()
            self._leg.playout.clear()
        event(log, "call.transfer", call=self._leg.sip_call_id, result=result, status=target, mode="warm")
        self._reporter.transfer(self._record, result, target)
        return (person, line) if person is not None else None

    def _briefing(self) -> str:
        """What the person hears: who is waiting, and the caller's last question with the agent's answer."""
        asked = [t for t in self._record.turns if t.outcome in ("answered", "confirmed") and t.transcript]
        last = asked[-1] if asked else None
        return announcement(self._record.remote, last.transcript if last else "",
                            " ".join(last.answer) if last and not last.abstained else "")
