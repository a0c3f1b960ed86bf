"""The caller's side of the line: 20 ms frames from the transport, out as 32 ms windows with the probability
that the caller (not the agent's own voice coming back) is speaking in each.

A frame is only appended to the call's inbox by whichever thread carries it (pjsua's media clock, the event
loop); nothing wakes for it. One `ListenClock` thread for all calls takes every inbox each tick, cuts the
windows, runs Silero over all calls' new windows (one model run for all calls with as many new windows), and
hands all calls' windows to the event loop in one hop. So a call costs no thread wake-up per frame or per
window, only its share of one per tick.
"""

from __future__ import annotations

import asyncio
import contextlib
import threading
import time
from collections import deque
from collections.abc import AsyncIterator, Callable
from typing import NamedTuple

import numpy as np

from agent.audio.pcm import int16_to_float
from agent.call.listening.echo import EchoGate
from agent.speech.vad import WINDOW, VadState
from agent.threads import name_native

NO_WINDOWS = np.zeros((0, WINDOW), dtype=np.int16)
VadRun = Callable[[list[tuple[np.ndarray, VadState]]], list[np.ndarray]]
"""The VAD over several calls' new windows at once (`SileroModel.run_streams`)."""
MAX_QUEUED_FRAMES = 250
"""5 s of 20 ms frames waiting for the audio path; beyond that frames are dropped (and counted)."""


class Window(NamedTuple):
    pcm: np.ndarray
    """int16, 16 kHz, WINDOW samples."""
    samples: np.ndarray
    """The same as float32."""
    speech: float
    """The VAD's probability that this is the caller speaking; 0 when it can be the agent's own echo."""


class Cut(NamedTuple):
    """What one tick took from a call's inbox: its new windows and whether each is loud enough not to be echo."""

    pcm: np.ndarray
    """int16, shape (windows, WINDOW)."""
    admitted: list[bool]
    closed: bool


class Listener:
    """One call's ear. `push`, `close` and `forget_echo` may come from any thread; `windows` runs on the loop."""

    def __init__(self, clock: ListenClock, echo_gate_db: float) -> None:
        self._clock = clock
        self._gate = EchoGate(echo_gate_db)
        self._inbox: deque[tuple[np.ndarray, float] | None] = deque()
        self._forget = False
        self._held: Callable[[], bool] = lambda: False
        self._attentive: Callable[[], bool] = lambda: True
        self._pending = np.zeros(0, dtype=np.int16)
        self._ready: asyncio.Queue[Window | BaseException | None] = asyncio.Queue()
        self.state = VadState()
        """Silero's state for this call, advanced only by the clock's thread."""
        self.dropped_frames = 0

    def push(self, pcm: np.ndarray, outbound_rms: float) -> None:
        """One frame from the line, and how loud the agent's frame sent at the same time was. A stalled audio
        path drops frames rather than piling them up forever."""
        if len(self._inbox) < MAX_QUEUED_FRAMES:
            self._inbox.append((pcm, outbound_rms))
        else:
            self.dropped_frames += 1

    def close(self) -> None:
        """The call is over: `windows` ends once the frames before this are heard."""
        self._inbox.append(None)

    def forget_echo(self) -> None:
        """The caller talked over the agent: what was played before is no echo of what comes now."""
        self._forget = True

    async def windows(self, held: Callable[[], bool],
                      attentive: Callable[[], bool] = lambda: True) -> AsyncIterator[Window]:
        """The caller's windows until `close`; nothing while the call is `held` (a held line carries music or
        nothing, never the caller). While not `attentive` (nobody speaking: only the start of speech is waited
        for, and it takes 200 ms to be sure of) they may come a quiet tick late. Raises what broke the audio
        path."""
        self._held, self._attentive = held, attentive
        self._clock.add(self, asyncio.get_running_loop())
        try:
            while (item := await self._ready.get()) is not None:
                if isinstance(item, BaseException):
                    raise item
                yield item
        finally:
            self._clock.remove(self)

    def attentive(self) -> bool:
        """Whether the call needs hearing at every tick (someone is speaking, or the call is closing)."""
        return self._attentive() or (bool(self._inbox) and self._inbox[-1] is None)

    def cut(self) -> Cut:
        """The clock's thread: every frame in the inbox through the echo gate, cut into whole windows (one array
        operation for all of them; each window judged by the outbound loudness as of the frame that completed
        it, as frame by frame)."""
        if self._forget:
            self._forget = False
            self._gate.forget()
        frames: list[tuple[np.ndarray, float]] = []
        closed = False
        while self._inbox:
            item = self._inbox.popleft()
            if item is None:
                closed = True
                break
            frames.append(item)
        if self._held():
            for _, outbound_rms in frames:
                self._gate.played(outbound_rms)
            return Cut(NO_WINDOWS, [], closed)
        ends = len(self._pending) + np.cumsum([len(pcm) for pcm, _ in frames])
        audio = np.concatenate([self._pending, *(pcm for pcm, _ in frames)])
        whole = len(audio) // WINDOW
        windows, self._pending = audio[:whole * WINDOW].reshape(whole, WINDOW), audio[whole * WINDOW:].copy()
        loudness = np.sqrt(np.mean(windows.astype(np.float64) ** 2, axis=1))
        admitted: list[bool] = []
        for (_, outbound_rms), end in zip(frames, ends, strict=True):
            self._gate.played(outbound_rms)
            while len(admitted) < whole and (len(admitted) + 1) * WINDOW <= end:
                admitted.append(self._gate.admits(float(loudness[len(admitted)])))
        return Cut(windows, admitted, closed)

    def deliver(self, items: list[Window | BaseException | None]) -> None:
        """The event loop: windows (and the end, or what broke) from one tick."""
        for item in items:
            self._ready.put_nowait(item)


class ListenClock:
    """One thread for every call's listening: each `tick_s` it cuts the frames of every attentive call (and
    every `quiet_tick_s` those of every call where nobody speaks) into windows, runs the VAD over all of their new
    windows at once (calls with as many new windows share one model run, each with its own state), and wakes each
    event loop once with every call's windows. Idle (no call) it sleeps until a call comes.

    Silero's cost is mostly per run (AMD EPYC: 183 us for one window, 436 us for four), so a quiet call heard
    every 128 ms costs about half of one heard every 32 ms, and quiet calls are all heard at the same tick, to
    share their runs; the end of a turn and a barge-in, which a caller waits on, are judged at every tick."""

    def __init__(self, vad_run_streams: VadRun, tick_s: float, quiet_tick_s: float | None = None,
                 running: bool = True) -> None:
        """`vad_run_streams`: the VAD over several calls' windows (SileroModel.run_streams); `tick_s`: how often
        an attentive call is heard; `quiet_tick_s` (default: the same): a call where nobody speaks, rounded to
        whole ticks. `running=False`: no thread; whoever made the clock ticks it with `step` (tests do)."""
        self._vad_run_streams, self.tick_s = vad_run_streams, tick_s
        self._quiet_every = max(1, round((quiet_tick_s or tick_s) / tick_s))
        self._ticks = 0
        self._listeners: dict[Listener, asyncio.AbstractEventLoop] = {}
        self._changed = threading.Condition()
        self._stopped = False
        self._thread = threading.Thread(target=self._run, name="listen", daemon=True) if running else None
        if self._thread is not None:
            self._thread.start()

    def add(self, listener: Listener, loop: asyncio.AbstractEventLoop) -> None:
        with self._changed:
            self._listeners[listener] = loop
            self._changed.notify()

    def remove(self, listener: Listener) -> None:
        with self._changed:
            self._listeners.pop(listener, None)

    def stop(self) -> None:
        with self._changed:
            self._stopped = True
            self._changed.notify()
        if self._thread is not None:
            self._thread.join(timeout=5)

    def step(self) -> None:
        """One tick now, on the calling thread."""
        with self._changed:
            listeners = list(self._listeners.items())
        self.tick(listeners)

    def _run(self) -> None:
        name_native()
        next_tick = 0.0
        while True:
            with self._changed:
                while not self._listeners and not self._stopped:
                    self._changed.wait()
                    next_tick = 0.0
                if self._stopped:
                    return
                listeners = list(self._listeners.items())
            now = time.monotonic()
            if next_tick > now:
                time.sleep(next_tick - now)
            next_tick = max(next_tick, now) + self.tick_s
            self.tick(listeners)

    def tick(self, listeners: list[tuple[Listener, asyncio.AbstractEventLoop]]) -> None:
        """One pass over `listeners`: their windows delivered, one hop per event loop."""
        everyone = self._ticks % self._quiet_every == 0
        self._ticks += 1
        heard = [(listener, loop, _cut(listener)) for listener, loop in listeners
                 if everyone or listener.attentive()]
        owners = [n for n, (_, _, cut) in enumerate(heard) if isinstance(cut, Cut) and len(cut.pcm)]
        streams = [(int16_to_float(heard[n][2].pcm), heard[n][0].state) for n in owners]
        heard_by_vad = {n: (samples, speech) for n, (samples, _), speech
                        in zip(owners, streams, self._speech(streams), strict=True)}
        by_loop: dict[asyncio.AbstractEventLoop, list[tuple[Listener, list]]] = {}
        for n, (listener, loop, cut) in enumerate(heard):
            items = _items(cut, heard_by_vad.get(n))
            if items:
                by_loop.setdefault(loop, []).append((listener, items))
        for loop, deliveries in by_loop.items():
            with contextlib.suppress(RuntimeError):  # that loop is closed: its calls are gone
                loop.call_soon_threadsafe(_deliver_all, deliveries)

    def _speech(self, streams: list[tuple[np.ndarray, VadState]]) -> list[np.ndarray | BaseException]:
        """Every call's speech probabilities, or what broke its audio path."""
        if not streams:
            return []
        try:
            return list(self._vad_run_streams(streams))
        except Exception as exc:  # noqa: BLE001 - which call broke the run is not known: each is run alone
            if len(streams) == 1:
                return [exc]
        out: list[np.ndarray | BaseException] = []
        for stream in streams:
            try:
                out.append(self._vad_run_streams([stream])[0])
            except Exception as exc:  # noqa: BLE001 - this call's audio path broke: the session ends the call
                out.append(exc)
        return out


def _cut(listener: Listener) -> Cut | BaseException:
    try:
        return listener.cut()
    except Exception as exc:  # noqa: BLE001 - the call's audio path broke: the session ends the call
        return exc


def _items(cut: Cut | BaseException, vad: tuple[np.ndarray, np.ndarray | BaseException] | None
           ) -> list[Window | BaseException | None]:
    """What a call's listener is handed for one tick: its windows (`vad`: the same as float, and their speech
    probabilities; None when there is no new window) and the end, or what broke."""
    if isinstance(cut, BaseException):
        return [cut]
    end: list[Window | BaseException | None] = [None] if cut.closed else []
    if vad is None:
        return end
    samples, speech = vad
    if isinstance(speech, BaseException):
        return [speech]
    # Not admitted: the agent's own voice coming back (or its tail), not the caller.
    return [Window(cut.pcm[i], samples[i], float(speech[i]) if cut.admitted[i] else 0.0)
            for i in range(len(cut.pcm))] + end


def _deliver_all(deliveries: list[tuple[Listener, list]]) -> None:
    for listener, items in deliveries:
        listener.deliver(items)

