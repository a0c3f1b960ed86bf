"""The running agent: models, one knowledge base and voice per dialplan profile, the SIP endpoint,
and one CallSession per call."""

from __future__ import annotations

import asyncio
import logging
import os
import threading
import time
from collections import Counter
from collections.abc import Callable

import pjsua2 as pj

from agent.call.capacity import Capacity, CapacityConfig
from agent.call.listening.listen import ListenClock
from agent.call.record import CallReporter
from agent.call.session import CallSession
from agent.call.speaking.prerender import Prerenderer
from agent.call.speaking.voice import Phrases, Voice
from agent.call.understanding.prepare import Pipeline
from agent.call.workers import ModelWorkers, Priority
from agent.dialplan import Dialplan, Profile
from agent.knowledge.base import KnowledgeBase
from agent.knowledge.memory import CallMemory
from agent.logs import event
from agent.models.load import Models
from agent.settings import Settings
from agent.side.recordings import Recordings
from agent.side.turn_audio import TurnAudio
from agent.sip.admission import AdmissionConfig, flood_limits, parse_networks
from agent.sip.build_info import installed as installed_pjsua2
from agent.sip.endpoint import SipEndpoint
from agent.sip.leg import CallLeg, CallObserver
from agent.sip.registration import RegistrationConfig, RegistrationStatus
from agent.sip.screening import Refusal
from agent.sip.security import TlsConfig
from agent.sip.setup import SipConfig
from agent.stages import call_config, phraser

log = logging.getLogger(__name__)


class Agent:
    """Answers calls until stopped."""

    def __init__(self, settings: Settings, models: Models, dialplan: Dialplan, knowledge: dict[str, KnowledgeBase],
                 voices: dict[str, Voice], workers: ModelWorkers, reporter: CallReporter,
                 on_registration: Callable[[RegistrationStatus], None] | None = None,
                 on_refused: Callable[[Refusal], None] | None = None,
                 on_render_backlog: Callable[[int], None] = lambda n: None,
                 on_capacity: Callable[[int], None] = lambda spare: None) -> None:
        """`knowledge` is keyed by profile name, `voices` by the profiles' voice names."""
        self.settings, self.models, self.dialplan, self.workers = settings, models, dialplan, workers
        self.knowledge, self.voices, self.reporter = knowledge, voices, reporter
        self._on_registration, self._on_refused, self._on_capacity = on_registration, on_refused, on_capacity
        self.capacity = Capacity(CapacityConfig(len(os.sched_getaffinity(0)), settings.cpu_target, settings.max_calls))
        speaks_for = {name: [knowledge[p.name] for p in dialplan.profiles if p.voice == name] for name in voices}
        self._prerender = Prerenderer(((voice, speaks_for[name]) for name, voice in voices.items()),
                                      workers.lane(Priority.BACKGROUND),
                                      busy=lambda: bool(self.sessions), on_backlog=on_render_backlog)
        self.sessions: dict[str, CallSession] = {}
        self._tasks: set[asyncio.Task] = set()
        self._phrases: dict[str, Phrases] = {}
        self._per_profile: Counter[str] = Counter()
        self._per_profile_lock = threading.Lock()  # counted on the SIP thread, released on the loop
        self._endpoint: SipEndpoint | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self._prerender_task: asyncio.Task | None = None
        self._capacity_task: asyncio.Task | None = None
        # Every call's VAD windows on one thread of their own, never behind a Whisper decode, a record write or
        # a re-index.
        self._listening = ListenClock(models.vad.run_streams, settings.listen_tick_ms / 1000,
                                      settings.listen_quiet_tick_ms / 1000)
        self.phraser = phraser(settings)
        """An LLM phrasing answers for every call, or None (AGENT_LLM_URL unset)."""
        self.turn_audio = TurnAudio(settings.turn_audio_dir) if settings.turn_audio_dir else None
        self.recordings = Recordings(settings.recordings_path, reporter.call_recorded) if settings.record_calls \
            else None

    @property
    def sip_listening(self) -> bool:
        return self._endpoint is not None and self._endpoint.listening

    @property
    def registration(self) -> RegistrationStatus | None:
        """None when no registrar is configured."""
        if self._endpoint is None or self._endpoint.registration is None:
            return None
        return self._endpoint.registration.status

    async def start(self) -> None:
        self._loop = asyncio.get_running_loop()
        for profile in self.dialplan.profiles:
            voice = self.voices[profile.voice]
            self._phrases[profile.name] = await asyncio.to_thread(voice.phrases, profile.opening)
        s = self.settings
        domains = tuple(d.strip() for d in s.sip_domains.split(",") if d.strip())
        registration = RegistrationConfig(s.sip_registrar, s.sip_username, s.sip_password, s.sip_auth_realm,
                                          s.sip_register_expires_s, s.sip_register_retry_max_s) \
            if s.sip_registrar else None
        build = installed_pjsua2()
        flood_rate, flood_burst = flood_limits(s.max_calls, build.ioqueue_sockets)
        admission = AdmissionConfig(parse_networks(s.sip_trusted_peers), s.sip_calls_per_source, s.sip_invite_rate,
                                    s.sip_invite_burst, float(s.sip_block_s), flood_rate, flood_burst)
        config = SipConfig(s.sip_host, s.sip_port, s.rtp_port_min, s.rtp_port_max, s.max_calls, domains,
                           registration=registration, admission=admission, call_slots=build.max_calls,
                           ioqueue_sockets=build.ioqueue_sockets, srtp=s.srtp,
                           tls=TlsConfig(s.sip_tls_port, s.sip_tls_cert, s.sip_tls_key) if s.sip_tls_port else None)
        self._endpoint = SipEndpoint(config, self._new_call, self._on_registration, self._on_refused,
                                     has_room=lambda active: self.capacity.spare(max(active, len(self.sessions))) > 0)
        await asyncio.to_thread(self._endpoint.start)
        self._capacity_task = asyncio.create_task(self._measure_capacity())
        # Call objects may be released on this thread: pjsua2 must know it.
        pj.Endpoint.instance().libRegisterThread("asyncio")
        if self.settings.speech_prerender:
            self._prerender_task = asyncio.create_task(self._prerender.run())

    async def drain(self, timeout: float) -> None:
        """Stop taking calls (new INVITEs get 503) and end every call politely (see CallSession.wind_down),
        waiting at most `timeout` seconds for them."""
        if self._endpoint is not None:
            self._endpoint.gate.draining = True
        sessions = list(self.sessions.values())
        event(log, "agent.draining", calls=len(sessions), timeout_s=timeout)
        if sessions:
            for session in sessions:
                asyncio.create_task(session.wind_down())
            await asyncio.wait(list(self._tasks), timeout=timeout)

    @property
    def spare_calls(self) -> int:
        return self.capacity.spare(len(self.sessions))

    async def _measure_capacity(self) -> None:
        """What the calls cost, once a second (see call/capacity)."""
        while True:
            self.capacity.observe(time.monotonic(), time.process_time(), len(self.sessions))
            self._on_capacity(self.spare_calls)
            await asyncio.sleep(1.0)

    async def stop(self) -> None:
        for task in (self._prerender_task, self._capacity_task):
            if task is not None:
                task.cancel()
        for session in list(self.sessions.values()):
            session.leg.hang_up()
        if self._tasks:
            await asyncio.wait(self._tasks, timeout=5)
        if self._endpoint is not None:
            await asyncio.to_thread(self._endpoint.stop)
        self._listening.stop()
        if self.phraser is not None:
            await self.phraser.client.close()
        if self.turn_audio is not None:
            await asyncio.to_thread(self.turn_audio.close)
        if self.recordings is not None:
            await asyncio.to_thread(self.recordings.close)

    def _new_call(self, leg: CallLeg) -> CallObserver | None:
        """On the SIP thread, for each accepted INVITE: route it to a profile, build the session, start it
        on the loop. None (486) when the profile is at its own call limit."""
        profile = self.dialplan.route(leg.dialed)
        session = self._session(leg, profile)
        if session is not None:
            self._loop.call_soon_threadsafe(self._run_session, session, profile)
        return session

    async def open_call(self, call) -> str | None:
        """A call that did not come over SIP (a WebSocket media stream, the browser phone): admitted like a
        SIP call (max_calls, the profile's limit, measured capacity), then run until it ends (`call.run`).
        Returns at once why it was refused, or None once it is over."""
        profile = self.dialplan.route(call.dialed)
        if self.capacity.spare(len(self.sessions)) <= 0:  # max_calls and the measured CPU cost, as for SIP
            return "busy: the agent is at its call limit"
        session = self._session(call, profile)
        if session is None:
            return f"busy: profile {profile.name} is at its call limit"
        task = self._run_session(session, profile)
        session.on_media(call.codec, call.clock_rate)
        try:
            await call.run(session)
        finally:
            await asyncio.wait([task], timeout=self.settings.model_deadline_s * 3)
        return None

    def _session(self, leg, profile: Profile) -> CallSession | None:
        """The session for a new call on `leg` (any CallTransport), counted against its profile's limit;
        None when the profile is full."""
        s = self.settings
        with self._per_profile_lock:
            if self._per_profile[profile.name] >= profile.max_calls:
                return None
            self._per_profile[profile.name] += 1
        try:
            session = CallSession(
                leg, self._loop, Pipeline(self.models.transcriber, self.knowledge[profile.name],
                                          self.voices[profile.voice], self.workers.lane(Priority.URGENT),
                                          self.workers.lane(Priority.SPECULATIVE), self.phraser,
                                          self.models.second_transcriber, self.workers.lane(Priority.SPARE)),
                self._phrases[profile.name], self._listening, CallMemory(s.memory_turns, s.memory_chars),
                self.reporter, call_config(s, profile),
                keep_audio=self.turn_audio.keep if self.turn_audio else None,
                record_call=self.recordings.start if self.recordings else None)
        except Exception:
            with self._per_profile_lock:  # a session that never started must not keep its profile's line
                self._per_profile[profile.name] -= 1
            raise
        event(log, "call.started", call=leg.sip_call_id, remote=leg.remote, dialed=leg.dialed, profile=profile.name)
        return session

    def _run_session(self, session: CallSession, profile: Profile) -> asyncio.Task:
        self.sessions[session.leg.sip_call_id] = session
        task = asyncio.create_task(session.run())
        self._tasks.add(task)

        def done(finished: asyncio.Task) -> None:
            self._tasks.discard(finished)
            with self._per_profile_lock:
                self._per_profile[profile.name] -= 1
            self.sessions.pop(session.leg.sip_call_id, None)
            if not finished.cancelled() and finished.exception() is not None:
                event(log, "call.crashed", logging.ERROR, call=session.leg.sip_call_id,
                      error=repr(finished.exception()))

        task.add_done_callback(done)
        return task
