"""The SIP user agent: one pjsua2 Endpoint, driven from its own thread.

pjsua2 calls back from the thread that polls it, and wants every API call
made from a thread it knows; so one "sip" thread owns the Endpoint, polls
it, and runs the commands the asyncio side queues with `call_soon`. Call
events travel the other way with `loop.call_soon_threadsafe`.
"""

from __future__ import annotations

import concurrent.futures
import heapq
import itertools
import logging
import queue
import threading
import time
from collections.abc import Callable

import pjsua2 as pj

from agent.logs import event
from agent.sip.call_table import CallTable
from agent.sip.gate import Gate
from agent.sip.headers import request_uri_host, secured_kind, takes_replaces
from agent.sip.leg import CallLeg, CallObserver
from agent.sip.pjlog import create_library, route_pjsip_logs
from agent.sip.registration import Registration, RegistrationStatus
from agent.sip.screening import Refusal
from agent.sip.setup import SipConfig, account_config, endpoint_config, source_address, start_transports
from agent.sip.sip_call import SipCall
from agent.threads import name_native

log = logging.getLogger(__name__)

RETRY_AFTER_S = 10
"""Told to callers refused with 503 (shutting down, at capacity)."""


class AgentAccount(pj.Account):
    """Receives every INVITE to this address, whatever the user part."""

    def __init__(self, endpoint: SipEndpoint) -> None:
        super().__init__()
        self._endpoint = endpoint

    def onIncomingCall(self, prm: pj.OnIncomingCallParam) -> None:  # noqa: N802 - pjsua2 callback name
        # An exception escaping a pjsua2 callback aborts the process: nothing may leave this method.
        try:
            rdata = prm.rdata  # hold the SWIG temporary while reading it
            self._endpoint.incoming(self, prm.callId, rdata.wholeMsg, rdata.srcAddress)
        except Exception:
            log.exception("sip.incoming_failed")
            self._endpoint.refuse(self, prm.callId, Refusal(500, "internal error"), "")

    def onRegState(self, prm: pj.OnRegStateParam) -> None:  # noqa: N802 - pjsua2 callback name
        self._endpoint.registration_result(int(prm.code), str(prm.reason), int(prm.expiration))


class SipEndpoint:
    """Owns pjsua2 for the process; `start()` returns once SIP is listening."""

    def __init__(self, config: SipConfig, new_call: Callable[[CallLeg], CallObserver | None],
                 on_registration: Callable[[RegistrationStatus], None] | None = None,
                 on_refused: Callable[[Refusal], None] | None = None,
                 has_room: Callable[[int], bool] = lambda active: True) -> None:
        """`has_room(active calls)`: whether one more call fits (see call/capacity); else 503."""
        self.config = config
        self._new_call, self._has_room = new_call, has_room
        self._on_registration, self._on_refused = on_registration, on_refused
        self.registration = Registration(config.registration) if config.registration else None
        self.gate = Gate(config)
        self._timers: list[tuple[float, int, Callable[[], None]]] = []
        self._timer_order = itertools.count()
        self._commands: queue.SimpleQueue[Callable[[], None]] = queue.SimpleQueue()
        self.calls = CallTable()
        self._stopping = threading.Event()
        self._started = threading.Event()
        self._error: BaseException | None = None
        self._thread = threading.Thread(target=self._run, name="sip", daemon=True)
        self.listening = False

    # --- asyncio side
    def start(self, timeout: float = 10.0) -> None:
        self._thread.start()
        if not self._started.wait(timeout):
            raise RuntimeError("SIP endpoint did not start in time")
        if self._error is not None:
            reason = getattr(self._error, "info", lambda: str(self._error))()
            raise RuntimeError(f"SIP endpoint failed to start on {self.config.host}:{self.config.port}: "
                               f"{reason}") from None

    def stop(self, timeout: float = 10.0) -> None:
        self._stopping.set()
        self._thread.join(timeout)

    def call_soon(self, command: Callable[[], None]) -> None:
        """Run `command` on the SIP thread (every pjsua2 call goes through here)."""
        self._commands.put(command)

    def dial(self, target: str, observer: CallObserver) -> concurrent.futures.Future:
        """Place an outbound call to `target` (any thread); resolves to its CallLeg, None when it failed."""
        placed: concurrent.futures.Future = concurrent.futures.Future()

        def place() -> None:
            call = SipCall(self._account, pj.PJSUA_INVALID_ID, self)
            call.observer = observer
            try:
                call.makeCall(target, pj.CallOpParam(True))
            except pj.Error as exc:
                event(log, "call.dial_failed", logging.WARNING, target=target, reason=exc.reason)
                placed.set_result(None)
                return
            call_id = call.getId()
            self.calls.add(call_id, call)
            call.set_id(call_id)
            placed.set_result(call.make_leg())

        self.call_soon(place)
        return placed

    def bridge(self, first: CallLeg, second: CallLeg) -> concurrent.futures.Future:
        """Connect two calls' audio both ways (any thread); resolves to whether both were still up."""
        done: concurrent.futures.Future = concurrent.futures.Future()

        def connect() -> None:
            calls = [self.calls.find(leg._pj_id, leg.sip_call_id) for leg in (first, second)]
            media = [call.audio_media() if call is not None else None for call in calls]
            if None in media:
                done.set_result(False)
                return
            media[0].startTransmit(media[1])
            media[1].startTransmit(media[0])
            done.set_result(True)

        self.call_soon(connect)
        return done

    # --- SIP thread
    def _run(self) -> None:
        name_native()
        try:
            self._endpoint = self._create()
        except BaseException as exc:  # reported to start()
            self._error = exc
            self._destroy_failed_start()
            self._started.set()
            return
        self.listening = True
        self._started.set()
        event(log, "sip.listening", host=self.config.host, port=self.config.port,
              transports="udp,tcp,tls" if self.config.tls else "udp,tcp",
              tls_port=self.config.tls.port if self.config.tls else 0, srtp=self.config.srtp)
        self.gate.firewall.attach()
        next_filter_check = 0.0
        try:
            while not self._stopping.is_set():
                self._endpoint.libHandleEvents(10)
                self._drain()
                if (now := time.monotonic()) >= next_filter_check:  # blocks and floods expire
                    self.gate.update_filter(now)
                    next_filter_check = now + 1.0
        finally:
            self.listening = False
            self._shutdown()

    def _drain(self) -> None:
        now = time.monotonic()
        while self._timers and self._timers[0][0] <= now:
            self._commands.put(heapq.heappop(self._timers)[2])
        while True:
            try:
                command = self._commands.get_nowait()
            except queue.Empty:
                self.calls.release_retired()
                return
            try:
                command()
            except Exception:
                log.exception("sip.command_failed")

    def _destroy_failed_start(self) -> None:
        endpoint = getattr(self, "_partial", None)
        if endpoint is not None:
            try:
                endpoint.libDestroy()
            except Exception:
                log.exception("sip.destroy_failed")

    def _create(self) -> pj.Endpoint:
        endpoint = self._partial = pj.Endpoint()
        create_library(endpoint)
        config = endpoint_config(self.config)
        self._pjsip_log = route_pjsip_logs(config, self.gate.request_seen)  # kept alive as long as the library
        endpoint.libInit(config)
        start_transports(endpoint, self.config)
        self._account = AgentAccount(self)
        self._account.create(account_config(self.config), True)
        return endpoint

    def registration_result(self, code: int, reason: str, expires_s: int) -> None:
        """A REGISTER finished (SIP thread): record it, and schedule the retry when it failed."""
        if self.registration is None or self._stopping.is_set():
            return
        delay = self.registration.on_result(code, reason, expires_s)
        status = self.registration.status
        if delay is None:
            event(log, "sip.registered", code=code, expires_s=expires_s)
        else:
            event(log, "sip.registration_failed", logging.WARNING, code=code, reason=reason,
                  failures=status.failures, retry_in_s=delay)
            self._call_later(delay, self._register_again)
        if self._on_registration is not None:
            self._on_registration(status)

    def _register_again(self) -> None:
        if not self._stopping.is_set():
            self._account.setRegistration(True)

    def _call_later(self, delay: float, command: Callable[[], None]) -> None:
        heapq.heappush(self._timers, (time.monotonic() + delay, next(self._timer_order), command))

    def incoming(self, account: AgentAccount, call_id: int, message: str, source: str) -> None:
        """An INVITE arrived: 503/486 when its source is over its limits (see admission), 400/488 when
        pjsip must not act on it (see screening), 404 when it is addressed elsewhere, 486 beyond max_calls
        or when the app declines it, else 180 and 200 and hand the call to the app."""
        address = source_address(source)
        if (refusal := self.gate.refusal(address, message)) is not None:
            return self.refuse(account, call_id, refusal, source)
        host = request_uri_host(message)
        if host not in self.config.accepted_hosts:
            # Not ours (a misrouted or hostile INVITE): never set up media toward whoever sent it.
            return self.refuse(account, call_id, Refusal(404, "not this host"), source)
        if len(self.calls) >= self.config.max_calls:
            return self.refuse(account, call_id, Refusal(486, "max calls"), source)
        if not self._has_room(len(self.calls)):
            # 503 with Retry-After: a proxy in front (Kamailio's dispatcher) tries another agent at once.
            return self.refuse(account, call_id, Refusal(503, "at capacity"), source)
        call = self._adopt(account, call_id)
        try:
            observer = self._new_call(call.make_leg(secured_kind(message, self.config.srtp), takes_replaces(message)))
        except Exception:  # the app could not set the call up: refuse it, the endpoint goes on
            log.exception("sip.session_failed")
            return self.refuse(account, call_id, Refusal(500, "session failed"), source, call)
        if observer is None:  # the app's own limit (the dialled profile's max_calls)
            return self.refuse(account, call_id, Refusal(486, "profile busy"), source, call)
        call.observer, call.source = observer, address
        self.gate.admission.started(address)
        call.ring_and_answer()

    def refuse(self, account: AgentAccount, call_id: int, refusal: Refusal, source: str,
               call: SipCall | None = None) -> None:
        """Answer an INVITE with a final error response; no media is ever set up for it."""
        event(log, "call.rejected", status=refusal.status, reason=refusal.reason, source=source)
        if self._on_refused is not None:
            self._on_refused(refusal)
        if call is None:
            call = self._adopt(account, call_id)  # kept until it is disconnected
        # Not from inside onIncomingCall: pjsua 2.15 aborts when an INVITE without SDP is refused there
        # (it frees a cloned rdata it never made).
        retry_after = RETRY_AFTER_S if refusal.status == 503 else None
        self.call_soon(lambda: call.reject(refusal.status, retry_after))
        self.gate.firewall.purge()  # the rest of a flood already queued, from a source just cut off

    def _adopt(self, account: AgentAccount, call_id: int) -> SipCall:
        """The SipCall for pjsua's new call `call_id` (see call_table for why an ended call with its id is kept)."""
        call = SipCall(account, call_id, self)
        self.calls.add(call_id, call)
        return call

    def forget(self, call_id: int, call: SipCall) -> None:
        """Drop a disconnected call (deferred: never inside its own callback); it is released on the SIP thread."""
        if call.source:
            self.gate.admission.ended(call.source)
            call.source = ""
        self.call_soon(lambda: self.calls.drop(call_id, call))

    def _shutdown(self) -> None:
        try:
            for call in self.calls.live():
                call.hang_up_now()
            for _ in range(50):  # let the BYEs go out
                self._endpoint.libHandleEvents(10)
            self.calls.clear()
            self._endpoint.audDevManager().setNoDev()
            self.calls.clear_ports()
            self._endpoint.libDestroy()
        except Exception:
            log.exception("sip.shutdown_failed")
        event(log, "sip.stopped")
