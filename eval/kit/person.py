"""The person a warm transfer calls: a pjsua2 user agent that rings, then answers, declines or never answers,
and when it answers listens to who is waiting, presses 1 (or says yes) to take the call, then speaks.

    python -m eval.kit.person --port 5090 --rtp-port 22000 --mode accept|accept-voice|decline|busy|no-answer
        [--address IP] [--registrar sip:PBX --user 6002 --password SECRET] [--yes yes.wav]
        [--say hello.wav] [--duration 40] --out DIR

Runs in its own process (one pjsua2 Endpoint per process). Writes DIR/received.wav and DIR/sent.wav (16 kHz)
and DIR/timeline.json: when it was called, answered, when the agent's briefing ended, what it pressed or said,
and how the call ended, in ticks of its own 20 ms media clock.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np
import pjsua2 as pj

from eval.kit.caller import (
    RATE,
    CallerCall,
    CallerPort,
    account_config,
    add_account_arguments,
    load_wav,
    wait_registered,
    write_call,
)

QUIET_TICKS, MIN_SPEECH_TICKS = 60, 50
"""The briefing is over after 1.2 s of quiet following at least a second of the agent's speech."""
LOUD = 500


def queued_until(port: CallerPort) -> int:
    """The tick at which audio queued now starts to go out (after what is queued already)."""
    with port.lock:
        return port.tick + 1 + len(port.queue)


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


def run(args: argparse.Namespace) -> dict:
    endpoint = pj.Endpoint()
    endpoint.libCreate()
    config = pj.EpConfig()
    config.uaConfig.threadCnt = 0
    config.uaConfig.mainThreadOnly = False
    config.medConfig.clockRate = config.medConfig.sndClockRate = RATE
    config.medConfig.ecTailLen = 0
    config.logConfig.level = config.logConfig.consoleLevel = 1
    endpoint.libInit(config)
    transport = pj.TransportConfig()
    transport.port, transport.boundAddress = args.port, args.address
    endpoint.transportCreate(pj.PJSIP_TRANSPORT_UDP, transport)
    endpoint.libStart()
    endpoint.audDevManager().setNullDev()
    port = CallerPort(0.0, 0)
    account = PersonAccount(port)
    account.create(account_config(args, "person"))
    wait_registered(endpoint, account, args.registrar)
    timeline: dict = {"mode": args.mode}
    started, answered_at, heard_agent, quiet, acted, seen = time.monotonic(), None, 0, 0, False, 0
    retired: list[CallerCall] = []
    while time.monotonic() - started < args.duration:
        endpoint.libHandleEvents(10)
        call = account.call
        if call is None:
            continue
        if "called_s" not in timeline:
            timeline["called_s"] = round(time.monotonic() - started, 2)
        if call.replaced_by is not None:  # the caller's phone took the agent's place on this call
            retired.append(call)  # pjsua2 still ends it: its object must outlive that
            account.call = call.replaced_by
            timeline["replaced_s"] = round(time.monotonic() - started, 2)
            continue
        if call.state == "disconnected":
            timeline["ended_by"] = timeline.get("ended_by", "agent")
            break
        if answered_at is None and time.monotonic() - started - timeline["called_s"] >= args.ring_s:
            if args.mode in ("busy", "decline-ring"):
                op = pj.CallOpParam()
                op.statusCode = 486 if args.mode == "busy" else 603
                call.answer(op)
                timeline["refused"] = op.statusCode
                answered_at = time.monotonic()
            elif args.mode != "no-answer":
                op = pj.CallOpParam()
                op.statusCode = 200
                call.answer(op)
                answered_at = time.monotonic()
                timeline["answered_tick"] = port.tick
        if answered_at is None or acted or call.state != "confirmed":
            continue
        with port.lock:
            new, seen = port.received[seen:], len(port.received)
        for frame in new:  # every 20 ms received: the agent speaking, or quiet
            loud = float(np.sqrt(np.mean(frame.astype(np.float32) ** 2))) > LOUD
            heard_agent += loud
            quiet = 0 if loud else quiet + 1
        if heard_agent >= MIN_SPEECH_TICKS and quiet >= QUIET_TICKS:  # the briefing is over: answer it
            acted = True
            timeline["briefing_end_tick"] = seen - QUIET_TICKS
            timeline["accepted_at"] = time.time()
            if args.mode == "accept-voice":
                yes = load_wav(args.yes)
                timeline["said_yes_tick"] = queued_until(port)
                timeline["yes_end_at"] = time.time() + 0.02 + voiced_s(yes)
                port.play(yes)
            else:
                digit = "2" if args.mode == "decline" else "1"
                call.dialDtmf(digit)
                timeline["pressed"], timeline["pressed_tick"] = digit, port.tick
            if args.say and args.mode != "decline":
                port.play(np.zeros(int(RATE * args.say_after_s), np.int16))
                timeline["said_tick"] = queued_until(port)
                timeline["said_at"] = time.time() + (timeline["said_tick"] - port.tick) * 0.02
                port.play(load_wav(args.say))
    call = account.call
    if call is not None and call.state not in ("disconnected",):
        timeline["ended_by"] = "person"
        call.hangup(pj.CallOpParam(True))
        for _ in range(100):
            endpoint.libHandleEvents(10)
            if call.state == "disconnected":
                break
    with port.lock:
        received, sent = list(port.received), list(port.sent)
    write_call(args.out, timeline, received, sent)
    port.closed = True
    endpoint.audDevManager().setNoDev()
    account.call = None
    retired.clear()
    del call, port
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
    run(args)
    return 0


if __name__ == "__main__":
    sys.exit(main())
