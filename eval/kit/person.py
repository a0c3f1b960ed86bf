"""The person a warm transfer calls: a pjsua2 user agent that rings, then answers, declines or never answers,
and when it answers listens to who is waiting, presses 1 (or says yes) to take the call, then speaks.

    python -m eval.kit.person --port 5090 --rtp-port 22000 --mode accept|accept-voice|decline|busy|no-answer
        [--address IP] [--registrar sip:PBX --user 6002 --password SECRET] [--yes yes.wav]
        [--say hello.wav] [--duration 40] --out DIR

Runs in its own process (one pjsua2 Endpoint per process). Writes DIR/received.wav and DIR/sent.wav (16 kHz)
and DIR/timeline.json: when it was called, answered, when the agent's briefing ended, what it pressed or said,
and how the call ended, in ticks of what it received (20 ms frames of DIR/received.wav, which runs from when the
phone registered: its sending clock only starts with the call).
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np
import pjsua2 as pj

from eval.kit.phone import (
    RATE,
    CallerCall,
    CallerPort,
    account_config,
    add_account_arguments,
    hang_up,
    load_wav,
    run_or_exit,
    start_endpoint,
    wait_registered,
    write_call,
)

QUIET_TICKS, MIN_SPEECH_TICKS = 60, 50
"""The briefing is over after 1.2 s of quiet following at least a second of the agent's speech."""
LOUD = 500


def queued_until(port: CallerPort) -> int:
    """The received tick at which audio queued now starts to go out (after what is queued already)."""
    with port.lock:
        return len(port.received) + 1 + len(port.queue)


def received_tick(port: CallerPort) -> int:
    with port.lock:
        return len(port.received)


def voiced_s(audio: np.ndarray) -> float:
    """Where the last word of a 16 kHz recording ends."""
    loud = np.flatnonzero(np.abs(audio.astype(np.int32)) > 1000)
    return (loud[-1] + 1) / RATE if len(loud) else 0.0


class PersonAccount(pj.Account):
    def __init__(self, port: CallerPort) -> None:
        super().__init__()
        self.port, self.call = port, None

    def onIncomingCall(self, prm) -> None:  # noqa: N802
        self.call = CallerCall(self, self.port, call_id=prm.callId)
        op = pj.CallOpParam()
        op.statusCode = 180
        self.call.answer(op)


class Person:
    """What the person does on the call the agent placed: ring, then answer or refuse as --mode says; once the
    agent's briefing is over, accept (1, or a spoken yes) or decline (2), then say --say to the caller."""

    def __init__(self, args: argparse.Namespace, port: CallerPort, timeline: dict) -> None:
        self.args, self.port, self.timeline = args, port, timeline
        self.answered = self.acted = False
        self._heard_agent = self._quiet = self._seen = 0

    def ringing(self, call: CallerCall, rang_s: float) -> None:
        """Answer or refuse once it has rung --ring-s (with --mode no-answer, never)."""
        if self.answered or rang_s < self.args.ring_s or self.args.mode == "no-answer":
            return
        op = pj.CallOpParam()
        if self.args.mode in ("busy", "decline-ring"):
            op.statusCode = self.timeline["refused"] = 486 if self.args.mode == "busy" else 603
        else:
            op.statusCode = 200
            self.timeline["answered_tick"] = received_tick(self.port)
        call.answer(op)
        self.answered = True

    def listening(self, call: CallerCall) -> None:
        """On the answered call: hear the briefing out, then answer it."""
        port = self.port
        with port.lock:
            new, self._seen = port.received[self._seen:], len(port.received)
        for frame in new:  # every 20 ms received: the agent speaking, or quiet
            loud = float(np.sqrt(np.mean(frame.astype(np.float32) ** 2))) > LOUD
            self._heard_agent += loud
            self._quiet = 0 if loud else self._quiet + 1
        if self._heard_agent >= MIN_SPEECH_TICKS and self._quiet >= QUIET_TICKS:
            self._reply(call)

    def _reply(self, call: CallerCall) -> None:
        args, port, timeline = self.args, self.port, self.timeline
        self.acted = True
        timeline["briefing_end_tick"] = self._seen - QUIET_TICKS
        timeline["accepted_at"] = time.time()
        if args.mode == "accept-voice":
            yes = load_wav(args.yes)
            timeline["said_yes_tick"] = queued_until(port)
            timeline["yes_end_at"] = time.time() + 0.02 + voiced_s(yes)
            port.play(yes)
        else:
            digit = "2" if args.mode == "decline" else "1"
            call.dialDtmf(digit)
            timeline["pressed"], timeline["pressed_tick"] = digit, received_tick(port)
        if args.say and args.mode != "decline":
            port.play(np.zeros(int(RATE * args.say_after_s), np.int16))
            timeline["said_tick"] = queued_until(port)
            timeline["said_at"] = time.time() + (timeline["said_tick"] - received_tick(port)) * 0.02
            port.play(load_wav(args.say))


def run(args: argparse.Namespace) -> dict:
    endpoint = start_endpoint(args.address, args.port, silence_suppression=True)
    port = CallerPort(0.0, 0)
    account = PersonAccount(port)
    account.create(account_config(args, "person"))
    wait_registered(endpoint, account, args.registrar)
    timeline: dict = {"mode": args.mode}
    person, started, retired = Person(args, port, timeline), time.monotonic(), []
    while time.monotonic() - started < args.duration:
        endpoint.libHandleEvents(10)
        call = account.call
        if call is None:
            continue
        timeline.setdefault("called_s", round(time.monotonic() - started, 2))
        if call.replaced_by is not None:  # the caller's phone took the agent's place on this call
            retired.append(call)  # pjsua2 still ends it: its object must outlive that
            account.call = call.replaced_by
            timeline["replaced_s"] = round(time.monotonic() - started, 2)
            continue
        if call.state == "disconnected":
            timeline["ended_by"] = timeline.get("ended_by", "agent")
            break
        person.ringing(call, time.monotonic() - started - timeline["called_s"])
        if person.answered and not person.acted and call.state == "confirmed":
            person.listening(call)
    call = account.call
    if call is not None and call.state != "disconnected":
        timeline["ended_by"] = "person"
        hang_up(endpoint, call)
    with port.lock:
        received, sent = list(port.received), list(port.sent)
    write_call(args.out, timeline, received, sent)
    port.closed = True
    endpoint.audDevManager().setNoDev()
    account.call = None
    retired.clear()
    del call, port, person
    account.shutdown()
    del account
    endpoint.libDestroy()
    return timeline


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m eval.kit.person", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--rtp-port", type=int, required=True)
    add_account_arguments(parser, "person")
    parser.add_argument("--mode", choices=("accept", "accept-voice", "decline", "busy", "decline-ring", "no-answer"),
                        default="accept")
    parser.add_argument("--ring-s", type=float, default=1.0, help="ring this long before answering or refusing")
    parser.add_argument("--yes", type=Path, help="accept-voice: the WAV said to accept")
    parser.add_argument("--say", type=Path, help="once accepted: the WAV the person says to the caller")
    parser.add_argument("--say-after-s", type=float, default=2.0, help="the pause between accepting and speaking")
    parser.add_argument("--duration", type=float, default=40.0)
    parser.add_argument("--out", type=Path, required=True)
    args = parser.parse_args(argv)
    run_or_exit(run, args)
    return 0


if __name__ == "__main__":
    sys.exit(main())
