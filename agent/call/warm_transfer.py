"""A warm hand-over to a person: while the caller holds, the agent calls the person itself, tells them who is
waiting and what was asked, and puts the caller through only when they accept (press 1 or say yes); a person who
declines, is busy or does not answer in time is let go and the next one tried. Nobody taking the call brings the
caller back to the agent, which says so and offers a message (call.core).

The two calls are first joined in the agent's conference bridge (both ways), so they hear each other at once
whatever the caller's phone supports. When the phone takes REFER with Replaces, it is then asked to call the person
itself in place of the agent's call, and the agent leaves the line; otherwise (or when that fails) the agent
stays in between until one of them hangs up. The pure parts (what the person hears, what
their answer means, the hold tone) are functions here; `WarmTransfer` is the I/O around them.
"""

from __future__ import annotations

import asyncio
import logging
import re
import threading
from collections.abc import Awaitable, Callable
from dataclasses import dataclass

import numpy as np

from agent.audio.pcm import rms, tone
from agent.call.transport import RATE
from agent.call.understanding.yes_no import is_no, is_yes
from agent.logs import event

log = logging.getLogger(__name__)

ACCEPT_DIGIT, DECLINE_DIGIT = "1", "2"
VOICED_RMS = 600.0
"""A person's frame louder than this (about -35 dBFS) is speech, for hearing their yes or no."""
MIN_VOICED_FRAMES, END_QUIET_FRAMES = 4, 35
"""An answer is at least 80 ms of speech, over after 700 ms of quiet."""
MAX_ANSWER_FRAMES = 250
"""A spoken answer is cut at 5 s: a yes or a no is short."""
HAND_OVER_S = 10.0
"""How long the caller's phone has to take over the person's call before the agent stays in between."""


@dataclass(frozen=True)
class WarmTransferConfig:
    targets: tuple[str, ...]
    """SIP URIs tried in order."""
    ring_s: float = 20.0
    """How long each may ring before the next is tried."""
    answer_s: float = 12.0
    """How long a person who picked up has to accept or decline, after hearing who is waiting."""


def targets(setting: str) -> tuple[str, ...]:
    """The people to try, from AGENT_TRANSFER_TO (comma-separated SIP URIs, in order)."""
    return tuple(t.strip() for t in setting.split(",") if t.strip())


WAITING = "is waiting to speak to someone."
TAKE, DO_NOT_TAKE = "Press 1 or say yes to take the call.", "Press 2 or say no if you can't."


def announcement(caller: str, question: str, answer: str) -> str:
    """What the person hears when they pick up: who is waiting, what they asked, what the agent told them."""
    number = caller.split("sip:", 1)[-1].split("@", 1)[0].strip('<>" ') or "an unknown number"
    spoken = " ".join(number) if number.isdigit() else number
    parts = [f"Hello, this is the phone assistant. A caller from {spoken} {WAITING}"]
    if question:
        parts.append(f"They asked: {question.strip().rstrip('?.')}.")
    if answer:
        parts.append(f"I told them: {answer.strip()}")
    parts += [TAKE, DO_NOT_TAKE]
    return " ".join(parts)


def verdict(digit: str | None = None, words: str | None = None) -> bool | None:
    """Whether the person accepts: 1 or yes accepts, 2 or no declines; anything else says nothing."""
    if digit is not None:
        return True if digit == ACCEPT_DIGIT else False if digit == DECLINE_DIGIT else None
    if words:
        return True if is_yes(words) else False if is_no(words) else None
    return None


def hold_tone() -> np.ndarray:
    """Three seconds of what a caller on hold hears: two soft beeps, then quiet."""
    beep = tone(440.0, 0.25, RATE, level=0.08)
    gap = np.zeros(RATE // 10, np.int16)
    return np.concatenate([beep, gap, beep, np.zeros(3 * RATE - 2 * len(beep) - len(gap), np.int16)])


async def hold(playout) -> None:
    """The hold tone on the caller's line, over and over, until cancelled."""
    beeps = hold_tone()
    while True:
        if playout.pending_frames < 25:
            playout.say(beeps)
        await asyncio.sleep(0.25)


class PersonLine:
    """The observer of the agent's call to a person (pjsua2 threads in, the event loop out): when it is answered,
    the digits pressed, a spoken answer, and its end."""

    def __init__(self, loop: asyncio.AbstractEventLoop) -> None:
        self._loop = loop
        self.answered: asyncio.Future[None] = loop.create_future()
        self.ended: asyncio.Future[str] = loop.create_future()
        self.digits: asyncio.Queue[str] = asyncio.Queue()
        self.spoken: asyncio.Queue[np.ndarray] = asyncio.Queue()
        self._lock = threading.Lock()
        self._listening = False
        self._frames: list[np.ndarray] = []
        self._voiced = self._quiet = 0

    def listen(self) -> None:
        """From now on, what the person says is gathered into answers."""
        with self._lock:
            self._listening, self._frames, self._voiced, self._quiet = True, [], 0, 0

    # --- CallObserver, from pjsua2's threads
    def on_media(self, codec: str, clock_rate: int) -> None:
        self._loop.call_soon_threadsafe(self._set, self.answered, None)

    def on_hold(self, held: bool) -> None:
        pass

    def on_dtmf(self, digit: str) -> None:
        self._loop.call_soon_threadsafe(self.digits.put_nowait, digit)

    def on_frame(self, pcm: np.ndarray, outbound_rms: float) -> None:
        with self._lock:
            if not self._listening:
                return
            loud = rms(pcm) > VOICED_RMS
            if self._voiced == 0 and not loud:
                return
            self._frames.append(pcm.copy())
            self._voiced += loud
            self._quiet = 0 if loud else self._quiet + 1
            if (self._quiet >= END_QUIET_FRAMES or len(self._frames) >= MAX_ANSWER_FRAMES) and \
                    self._voiced >= MIN_VOICED_FRAMES:
                said = np.concatenate(self._frames)
                self._loop.call_soon_threadsafe(self.spoken.put_nowait, said)
            if self._quiet >= END_QUIET_FRAMES or len(self._frames) >= MAX_ANSWER_FRAMES:
                self._frames, self._voiced, self._quiet = [], 0, 0

    def on_transfer(self, status: int, reason: str, final: bool) -> None:
        pass

    def on_ended(self, reason: str) -> None:
        self._loop.call_soon_threadsafe(self._set, self.ended, reason)

    @staticmethod
    def _set(future: asyncio.Future, value: object) -> None:
        if not future.done():
            future.set_result(value)


def failure(reason: str) -> str:
    """A call that ended before it was answered, in the words of the transfer's record."""
    status = reason.split(" ", 1)[0]
    return {"486": "busy", "600": "busy", "603": "declined", "408": "no answer", "480": "no answer",
            "487": "no answer"}.get(status, "failed")


class WarmTransfer:
    """Tries each person in turn; `run()` returns the result ("transferred", or why the last one did not take the
    call) and, when transferred, the person's leg and line."""

    def __init__(self, config: WarmTransferConfig, caller_leg, speak: Callable[[str], Awaitable[np.ndarray]],
                 hear: Callable[[np.ndarray], Awaitable[str]], call_name: str) -> None:
        """`speak(text)`: the agent's voice; `hear(audio)`: what a person's answer says (Whisper)."""
        self.config, self._leg, self._speak, self._hear = config, caller_leg, speak, hear
        self._call_name = call_name

    async def run(self, briefing: str, tried: list[dict]) -> tuple[str, object | None, PersonLine | None, str]:
        """(result, person's leg, their line, the target that took it or was tried last); each try is added to
        `tried` as it ends (the call's record)."""
        result, target = "failed", ""
        for target in self.config.targets:
            result, person, line = await self._try(target, briefing)
            event(log, "call.warm_transfer", call=self._call_name, target=target, result=result)
            tried.append({"to": target, "mode": "warm", "result": result})
            if result == "transferred":
                tried[-1]["joined"] = await self._hand_over(person)
                return result, person, line, target
        return result, None, None, target

    async def _hand_over(self, person) -> str:
        """How the two were left joined: "replaced" (the caller's phone now calls the person itself) or
        "bridged" (through the agent)."""
        if not self._leg.takes_replaces:
            return "bridged"
        try:
            status = await asyncio.wait_for(asyncio.wrap_future(self._leg.hand_over(person)), HAND_OVER_S)
        except TimeoutError:
            status = None
        event(log, "call.hand_over", call=self._call_name, status=status)
        return "replaced" if status is not None and 200 <= status < 300 else "bridged"

    async def _try(self, target: str, briefing: str) -> tuple[str, object | None, PersonLine | None]:
        loop = asyncio.get_running_loop()
        line = PersonLine(loop)
        person = await asyncio.wrap_future(self._leg.dial(target, line))
        if person is None:
            return "failed", None, None
        # The briefing is made while the person's phone rings, and played whole: a pause between its sentences
        # would sound like the end of it.
        briefing_audio = asyncio.ensure_future(self._speak_all(briefing))
        put_through = False
        try:
            done, _ = await asyncio.wait({line.answered, line.ended}, timeout=self.config.ring_s,
                                         return_when=asyncio.FIRST_COMPLETED)
            if line.ended.done():
                return failure(line.ended.result()), None, None
            if not done:
                return "no answer", None, None
            accepted = await self._ask(person, line, await briefing_audio)
            if accepted is not True:
                if accepted is False and not line.ended.done():
                    await self._say(person, line, "Thank you. I'll let the caller know.")
                return "declined" if accepted is False else "no response", None, None
            put_through = await asyncio.wrap_future(self._leg.bridge(person))
            return ("transferred", person, line) if put_through else ("failed", None, None)
        finally:
            briefing_audio.cancel()
            if not put_through:
                person.hang_up()

    async def _ask(self, person, line: PersonLine, briefing: np.ndarray) -> bool | None:
        """The person hears the briefing, then has `answer_s` to accept or decline (asked once more if unclear)."""
        for attempt in range(2):
            await self._play(person, line, briefing if attempt == 0 else
                             await self._speak_all("Sorry, I didn't get that. Press 1 to take the call, or 2 if "
                                                   "you can't."))
            line.listen()
            deadline = asyncio.get_running_loop().time() + self.config.answer_s
            while (left := deadline - asyncio.get_running_loop().time()) > 0 and not line.ended.done():
                digit = asyncio.ensure_future(line.digits.get())
                spoken = asyncio.ensure_future(line.spoken.get())
                done, pending = await asyncio.wait({digit, spoken, line.ended}, timeout=left,
                                                   return_when=asyncio.FIRST_COMPLETED)
                for task in (digit, spoken):
                    if task not in done:
                        task.cancel()
                if digit in done and (answer := verdict(digit=digit.result())) is not None:
                    return answer
                words = await self._hear(spoken.result()) if spoken in done else None
                if words is not None:
                    event(log, "call.warm_transfer_heard", call=self._call_name, words=words[:80])
                if words is not None and (answer := verdict(words=words)) is not None:
                    return answer
                if spoken in done or digit in done:
                    break  # heard, but neither yes nor no: asked once more
            if line.ended.done():
                return None
        return None

    async def _speak_all(self, text: str) -> np.ndarray:
        """`text` as one piece of audio, synthesised sentence by sentence."""
        parts = [await self._speak(sentence) for sentence in re.split(r"(?<=[.!?])\s+", text.strip())]
        return np.concatenate(parts) if parts else np.zeros(0, np.int16)

    async def _say(self, person, line: PersonLine, text: str) -> None:
        await self._play(person, line, await self._speak_all(text))

    async def _play(self, person, line: PersonLine, audio: np.ndarray) -> None:
        """Back once the person has heard `audio` (or hung up)."""
        person.playout.say(audio)
        loop = asyncio.get_running_loop()
        deadline = loop.time() + len(audio) / RATE + 5
        while person.playout.pending_frames and not line.ended.done() and loop.time() < deadline:
            await asyncio.sleep(0.05)
