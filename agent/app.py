"""The running agent: models, knowledge, the SIP endpoint, and one CallSession per call."""

from __future__ import annotations

import asyncio
import logging
from concurrent.futures import ThreadPoolExecutor

import pjsua2 as pj

from agent.call.record import CallRecord
from agent.call.session import CallReporter, CallSession
from agent.call.turns import TurnConfig
from agent.call.voice import Phrases, Voice
from agent.knowledge.base import KnowledgeBase
from agent.knowledge.memory import CallMemory
from agent.logs import event
from agent.models.load import Models
from agent.settings import Settings
from agent.sip.endpoint import SipConfig, SipEndpoint
from agent.sip.leg import CallLeg, CallObserver
from agent.sip.port import BRIDGE_RATE

log = logging.getLogger(__name__)


class Agent:
    """Answers calls until stopped."""

    def __init__(self, settings: Settings, models: Models, knowledge: KnowledgeBase, workers: ThreadPoolExecutor,
                 reporter: CallReporter) -> None:
        self.settings, self.models, self.knowledge, self.workers = settings, models, knowledge, workers
        self.reporter = reporter
        self.voice = Voice(models.synthesizer, BRIDGE_RATE)
        self.sessions: dict[str, CallSession] = {}
        self.finished: list[CallRecord] = []
        self._tasks: set[asyncio.Task] = set()
        self._phrases: Phrases | None = None
        self._endpoint: SipEndpoint | None = None
        self._loop: asyncio.AbstractEventLoop | None = None

    @property
    def sip_listening(self) -> bool:
        return self._endpoint is not None and self._endpoint.listening

    async def start(self) -> None:
        self._loop = asyncio.get_running_loop()
        self._phrases = await asyncio.to_thread(self.voice.phrases, self.settings.greeting)
        s = self.settings
        domains = tuple(d.strip() for d in s.sip_domains.split(",") if d.strip())
        self._endpoint = SipEndpoint(SipConfig(s.sip_host, s.sip_port, s.rtp_port_min, s.rtp_port_max, s.max_calls,
                                               domains), self._new_call)
        await asyncio.to_thread(self._endpoint.start)
        # Call objects may be released on this thread: pjsua2 must know it.
        pj.Endpoint.instance().libRegisterThread("asyncio")

    async def stop(self) -> None:
        for session in list(self.sessions.values()):
            session.leg.hang_up()
        if self._tasks:
            await asyncio.wait(self._tasks, timeout=5)
        if self._endpoint is not None:
            await asyncio.to_thread(self._endpoint.stop)

    def _new_call(self, leg: CallLeg) -> CallObserver:
        """On the SIP thread, for each accepted INVITE: build the session, start it on the loop."""
        s = self.settings
        session = CallSession(
            leg, self._loop, transcriber=self.models.transcriber, knowledge=self.knowledge, voice=self.voice,
            phrases=self._phrases, vad=self.models.new_vad(),
            turn_config=TurnConfig(s.vad_threshold, s.vad_min_speech_ms, s.vad_hangover_ms, s.vad_max_utterance_s),
            models=self.workers, memory=CallMemory(s.memory_turns, s.memory_chars), echo_gate_db=s.echo_gate_db,
            inactivity_s=s.inactivity_s, max_call_s=s.max_call_s, dead_call_s=s.dead_call_s, reporter=self.reporter)
        event(log, "call.started", call=leg.sip_call_id, remote=leg.remote, dialed=leg.dialed)
        self._loop.call_soon_threadsafe(self._run_session, session)
        return session

    def _run_session(self, session: CallSession) -> None:
        self.sessions[session.leg.sip_call_id] = session
        task = asyncio.create_task(session.run())
        self._tasks.add(task)

        def done(finished: asyncio.Task) -> None:
            self._tasks.discard(finished)
            self.sessions.pop(session.leg.sip_call_id, None)
            if not finished.cancelled() and finished.exception() is None:
                self.finished.append(finished.result())
            elif not finished.cancelled():
                event(log, "call.crashed", logging.ERROR, call=session.leg.sip_call_id,
                      error=repr(finished.exception()))

        task.add_done_callback(done)
