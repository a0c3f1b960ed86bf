"""The stages of one call, built together and closed in order: the ear (listening/), the replies (understanding/),
the voice (speaking/), the message taker, the transfer, and the call's record.

The session (session.py) drives them and the call core; what is here only asks them what they are doing or stops
them, and decides nothing: no core, no callback into the session.
"""

from __future__ import annotations

import asyncio
import functools
import threading
from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np

from agent.call.commands import Phrase
from agent.call.config import CallConfig
from agent.call.listening.ear import Ear
from agent.call.listening.listen import ListenClock, Listener
from agent.call.message_taker import MessageTaker
from agent.call.put_through import PutThrough
from agent.call.record import CallAudioRecorder, CallBook, CallReporter
from agent.call.speaking.speak import Speaker
from agent.call.speaking.voice import Phrases
from agent.call.transport import CallTransport
from agent.call.understanding.prepare import Pipeline
from agent.call.understanding.replies import Replies
from agent.call.workers import off_loop
from agent.knowledge.memory import CallMemory
from agent.speech.asr import words


@dataclass
class CallParts:
    leg: CallTransport
    listener: Listener
    ear: Ear
    book: CallBook
    replies: Replies
    speaker: Speaker
    put_through: PutThrough
    messages: MessageTaker
    reply: asyncio.Task | None = None
    """The turn being answered."""
    cancel: threading.Event = field(default_factory=threading.Event)
    """Stops the synthesis of the reply being spoken."""

    @classmethod
    def build(cls, leg: CallTransport, loop: asyncio.AbstractEventLoop, pipeline: Pipeline, phrases: Phrases,
              listening: ListenClock, memory: CallMemory, reporter: CallReporter, config: CallConfig,
              keep_audio: Callable[[str, int, np.ndarray], None] | None,
              record_call: Callable[[str, float], CallAudioRecorder] | None) -> CallParts:
        """See CallSession for what each argument is."""
        book = CallBook.open(leg, loop.time(), reporter, keep_audio, record_call)
        if book.recorder is not None:
            leg.playout.tap = book.recorder.played
        transcribe = off_loop(pipeline.models, functools.partial(words, pipeline.transcriber, full_window=True))
        return cls(leg, Listener(listening, config.echo_gate_db), Ear(config.turns, config.endpointing), book,
                   Replies(pipeline, memory, config.model_deadline_s),
                   Speaker(leg, pipeline, memory, config.model_deadline_s),
                   PutThrough(leg, book.record, reporter, pipeline,
                              config.warm_transfer if leg.can_transfer else None),
                   MessageTaker(config.messages, book.record, leg.playout, reporter, phrases[Phrase.MESSAGE_SAVED],
                                transcribe, loop.time))

    def heard(self, pcm: np.ndarray, outbound_rms: float) -> None:
        """A frame of the caller's line (any thread): the listening clock takes it on its next tick."""
        self.listener.push(pcm, outbound_rms)
        if self.book.recorder is not None:
            self.book.recorder.heard(pcm)

    @property
    def agent_speaking(self) -> bool:
        return self.replying or self.leg.playout.pending_frames > 0

    @property
    def replying(self) -> bool:
        """A turn is being answered: its reply is prepared, or spoken sentence by sentence."""
        return self.reply is not None and not self.reply.done()

    def attentive(self) -> bool:
        """Whether the caller's audio must be judged at once (read from the listening clock's thread): someone is
        speaking, a reply is on its way, or a message is being left."""
        return not self.ear.quiet or self.agent_speaking or self.messages.recording

    def interrupt(self) -> int:
        """Barge-in and hold: silence from the next frame on, and stop making the rest of the answer."""
        dropped = self.leg.playout.clear()
        self.stop_reply()
        return dropped

    def stop_reply(self) -> None:
        """Stop making the rest of the reply (barge-in, hold, shutdown); what is queued is the caller's to clear."""
        self.cancel.set()
        if self.replying:
            self.reply.cancel()

    def hung_up(self) -> None:
        """The caller hung up: what they said of a message is kept, and the ear stops."""
        self.messages.finish("caller hung up", thank=False)
        self.listener.close()

    async def close(self, settle_s: float) -> None:
        """The call is over: nothing more is prepared, said or put through; the message's transcript (given
        `settle_s`) and the end go into the record."""
        self.replies.drop_speculation()
        self.interrupt()
        self.put_through.close()
        await self.messages.settle(settle_s)
        self.leg.playout.tap = None
        self.book.ended()
