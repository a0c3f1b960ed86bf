"""A scripted SIP caller built on pjsua2, for tests and evals: it speaks, listens, and times both.

    python -m eval.kit.caller --target sip:agent@127.0.0.1:5060 --port 5072 --question q.wav --out DIR
        [--address IP] [--registrar sip:PBX --user 6001 --password SECRET]
        [--codec PCMU|PCMA|G722] [--question-at 3] [--second q2.wav --barge-in-ms 800]
        [--echo-db -12 --echo-delay-ms 80 --echo-from-s 0] [--dtmf '*' (--dtmf-at 12 | --dtmf-after-answer)]
        [--hold-at 5 --unhold-at 9] [--accept-transfer]
        [--script steps.json [--react --hint WORDS]] [--duration 20]

Runs in its own process (pjsua2 allows one Endpoint per process). Everything is
timed in 20 ms media ticks of its own conference clock: the questions it sends
and the audio it receives land on the same timeline. Writes DIR/received.wav
and DIR/sent.wav (16 kHz) and DIR/timeline.json (tick numbers of each event).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path

import numpy as np
import pjsua2 as pj

from eval.kit.conversation import Conversation, Step
from eval.kit.phone import (
    CODECS,
    TICK,
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
from eval.kit.reactions import Reactions
from eval.kit.wire import answer_over, voiced_ticks


def script_conversation(script: list[tuple[np.ndarray, int | None]], quiet_ms: int,
                        reactions: Reactions | None = None,
                        received_since=None) -> Conversation:
    """The turn-taking policy (eval.kit.conversation) for a loaded script: each question's length in ticks, and its
    barge-in mark. With `reactions`, the caller answers the agent's clarifications: `received_since(n)` is the
    agent's audio since step n started, and what the caller says to it is put into `script` as the next step."""
    react = None
    if reactions is not None:
        def react(n: int) -> Step | None:
            audio = reactions.reply(n, received_since(n))
            if audio is None:
                return None
            script.insert(n + 1, (audio, None))
            return Step(len(audio) // TICK + 1)
    return Conversation([Step(len(audio) // TICK + 1, barge_in) for audio, barge_in in script], quiet_ms,
                        react=react)


def step_started(timeline: dict, start_tick: int, audio: np.ndarray, reactions: Reactions | None = None) -> None:
    """Note in the timeline where a scripted step starts and ends, in ticks of the agent's audio (with reactions,
    also the case it belongs to and what it was: question, repeat, yes or no)."""
    steps = timeline.setdefault("steps", [])
    step = {"start_tick": start_tick, "end_tick": start_tick + len(audio) // TICK}
    if reactions is not None:
        step.update(case=reactions.cases[len(steps)], kind=reactions.kinds[len(steps)])
    steps.append(step)


def load_script(path: Path) -> list[tuple[np.ndarray, int | None]]:
    """[{"audio": WAV, "barge_in_at_ms": ms or null}, ...] -> (16 kHz audio, barge-in ms) per question."""
    steps = json.loads(path.read_text())
    return [(load_wav(Path(step["audio"])), step.get("barge_in_at_ms")) for step in steps]


def _dtmf_due(args: argparse.Namespace, elapsed: float, port: CallerPort, timeline: dict) -> bool:
    """At --dtmf-at seconds, or with --dtmf-after-answer once the answer to the question is over."""
    if not args.dtmf_after_answer:
        return elapsed >= args.dtmf_at
    if "question_end_tick" not in timeline:
        return False
    with port.lock:
        since = port.received[timeline["question_end_tick"]:]
    return answer_over(voiced_ticks(since), len(since), args.quiet_ms)


def place(args: argparse.Namespace) -> tuple[pj.Endpoint, pj.Account, CallerPort, CallerCall]:
    """pjsua2 started (registered with --registrar, if any), and the call to --target on its way."""
    endpoint = start_endpoint(args.address, args.port, tcp=args.tcp, silence_suppression=args.silence_suppression,
                              loss_pct=args.loss, log_level=int(os.environ.get("CALLER_LOG", "1")))
    for codec in endpoint.codecEnum2():
        endpoint.codecSetPriority(codec.codecId, 255 if codec.codecId == CODECS[args.codec] else 0)
    account = pj.Account()
    account.create(account_config(args, "caller"))
    wait_registered(endpoint, account, args.registrar)
    port = CallerPort(10 ** (args.echo_db / 20) if args.echo_db is not None else 0.0, args.echo_delay_ms // 20,
                      round(args.echo_from_s * 50))
    call = CallerCall(account, port, args.accept_transfer)
    call.makeCall(args.target + (";transport=tcp" if args.tcp else ""), pj.CallOpParam(True))
    return endpoint, account, port, call


class Schedule:
    """What the caller does at set times or after set events, besides a script: the question and a second one
    (at a time, or a barge-in into the answer), DTMF, hold and unhold. Each happens once, noted in the timeline."""

    def __init__(self, args: argparse.Namespace, call: CallerCall, port: CallerPort, timeline: dict) -> None:
        self.args, self.call, self.port, self.timeline = args, call, port, timeline
        self.question = load_wav(args.question) if args.question else None
        self.second = load_wav(args.second) if args.second else None
        self._answer_seen_at: int | None = None

    def tick(self, elapsed: float) -> None:
        args, timeline, port = self.args, self.timeline, self.port
        if self.question is not None and "question_tick" not in timeline and elapsed >= args.question_at:
            self._play("question", self.question)
        if self.second is not None and "second_tick" not in timeline and self._second_due(elapsed):
            self._play("second", self.second)
        if args.dtmf and "dtmf_tick" not in timeline and _dtmf_due(args, elapsed, port, timeline):
            self.call.dialDtmf(args.dtmf)
            timeline["dtmf_tick"] = port.tick
        if args.hold_at is not None and "hold_tick" not in timeline and elapsed >= args.hold_at:
            self.call.setHold(pj.CallOpParam(True))
            timeline["hold_tick"] = port.tick
        if args.unhold_at is not None and "unhold_tick" not in timeline and elapsed >= args.unhold_at:
            unhold = pj.CallOpParam(True)
            unhold.opt.flag = pj.PJSUA_CALL_UNHOLD
            self.call.reinvite(unhold)
            timeline["unhold_tick"] = port.tick

    def _play(self, name: str, audio: np.ndarray) -> None:
        self.timeline[f"{name}_tick"] = self.port.play(audio)
        self.timeline[f"{name}_end_tick"] = self.timeline[f"{name}_tick"] + len(audio) // TICK

    def _second_due(self, elapsed: float) -> bool:
        """At --second-at, or --barge-in-ms into the answer to the question."""
        if self.args.second_at is not None:
            return elapsed >= self.args.second_at
        if "question_end_tick" not in self.timeline:
            return False
        if self._answer_seen_at is None:
            with self.port.lock:
                heard = voiced_ticks(self.port.received[self.timeline["question_end_tick"]:])
            if heard:
                self._answer_seen_at = self.timeline["question_end_tick"] + heard[0]
        return self._answer_seen_at is not None and self.port.tick >= self._answer_seen_at + self.args.barge_in_ms // 20


def follow_transfer(endpoint: pj.Endpoint, call: CallerCall, stay_s: float, timeline: dict) -> None:
    """Once the agent has left a call it transferred: stay on the call the transfer made a while, then hang up."""
    settle = time.monotonic() + stay_s
    while time.monotonic() < settle and call.transferred.state != "disconnected":
        endpoint.libHandleEvents(10)
    timeline["transferred_status"] = call.transferred.status
    timeline["transferred_ended_by"] = "other" if call.transferred.state == "disconnected" else "caller"
    if call.transferred.state != "disconnected":
        hang_up(endpoint, call.transferred)


def run(args: argparse.Namespace) -> dict:
    # The script read (and a reacting caller's checked) before dialling: a script it cannot follow places no call.
    script = load_script(args.script) if args.script else None
    reactions = Reactions(json.loads(args.script.read_text()), args.hint, load_wav) if args.react else None
    endpoint, account, port, call = place(args)
    timeline: dict = {"codec": args.codec}

    def received_since(n: int, port: CallerPort = port) -> np.ndarray:
        with port.lock:
            frames = port.received[timeline["steps"][n]["start_tick"]:]
        return np.concatenate(frames) if frames else np.zeros(0, np.int16)

    conversation = script_conversation(script, args.quiet_ms, reactions, received_since) if script else None
    schedule, fed, started = Schedule(args, call, port, timeline), 0, time.monotonic()
    while time.monotonic() - started < args.duration and call.state != "disconnected":
        endpoint.libHandleEvents(10)
        if call.state != "confirmed":
            continue
        if "confirmed_tick" not in timeline:
            timeline["confirmed_tick"], timeline["sip_call_id"] = port.tick, call.getInfo().callIdString
        if conversation is not None:
            with port.lock:
                fresh = port.received[fed:]
            for frame in fresh:
                fed += 1
                step = conversation.on_tick(fed, bool(voiced_ticks([frame])))
                if step is not None:
                    step_started(timeline, port.play(script[step][0]), script[step][0], reactions)
            if conversation.done:
                break
        schedule.tick(time.monotonic() - started)
    timeline["ended_by"] = "agent" if call.state == "disconnected" else "caller"
    timeline["status"] = call.status
    if call.transfer_to:
        timeline["transfer_to"] = call.transfer_to
    if call.transferred is not None:
        follow_transfer(endpoint, call, args.stay_transferred_s, timeline)
    if call.state != "disconnected":
        hang_up(endpoint, call)
    with port.lock:
        received, sent = list(port.received), list(port.sent)
    if port.clock is not None:
        timeline["clock"] = list(port.clock)
    if reactions is not None:  # what the caller made of each reply it listened to
        for n, heard in reactions.heard.items():
            timeline["steps"][n]["caller_heard"] = heard
    write_call(args.out, timeline, received, sent)
    port.closed = True
    # Stop the conference clock before releasing the port: pjsip 2.15 frees a removed port at once
    # while the clock thread may still call it. Then release pjsua2 objects before the library.
    endpoint.audDevManager().setNoDev()
    call.transferred = None
    del call, port, conversation, received_since, schedule  # the last three hold the port too
    account.shutdown()
    del account
    endpoint.libDestroy()
    return timeline


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m eval.kit.caller", description=__doc__.splitlines()[0])
    parser.add_argument("--target", required=True)
    parser.add_argument("--port", type=int, default=5072)
    add_account_arguments(parser, "caller")
    parser.add_argument("--rtp-port", type=int, default=21000)
    parser.add_argument("--tcp", action="store_true")
    parser.add_argument("--codec", choices=sorted(CODECS), default="PCMU")
    parser.add_argument("--script", type=Path, help="JSON list of questions to ask in turn (see eval.kit.conversation)")
    parser.add_argument("--react", action="store_true", help="with --script: answer the agent's clarifications "
                        "(ask again, confirm) as the person who asked would (eval.kit.reactions)")
    parser.add_argument("--hint", default="", help="with --react: the KB's words, as the caller's Whisper prompt")
    parser.add_argument("--quiet-ms", type=int, default=1000,
                        help="with --script or --dtmf-after-answer: agent silence that ends an answer")
    parser.add_argument("--question", type=Path)
    parser.add_argument("--question-at", type=float, default=3.0)
    parser.add_argument("--second", type=Path)
    parser.add_argument("--barge-in-ms", type=int, default=800,
                        help="start the second question this long into the answer to the first")
    parser.add_argument("--second-at", type=float, help="start the second question at this time instead")
    parser.add_argument("--echo-db", type=float)
    parser.add_argument("--echo-delay-ms", type=int, default=80)
    parser.add_argument("--echo-from-s", type=float, default=0.0, help="the echo starts this far into the call")
    parser.add_argument("--dtmf")
    parser.add_argument("--dtmf-at", type=float, default=10.0)
    parser.add_argument("--dtmf-after-answer", action="store_true",
                        help="send --dtmf once the answer to --question is over (--quiet-ms of silence)")
    parser.add_argument("--hold-at", type=float)
    parser.add_argument("--unhold-at", type=float)
    parser.add_argument("--loss", type=int, default=0, help="percent of outgoing RTP packets dropped")
    parser.add_argument("--silence-suppression", action="store_true", help="send no RTP while quiet (VAD/DTX)")
    parser.add_argument("--accept-transfer", action="store_true",
                        help="follow a transfer (REFER) by calling the target, as a phone would; else refuse it")
    parser.add_argument("--stay-transferred-s", type=float, default=2.0,
                        help="how long to stay on the call a followed transfer made once the agent has left")
    parser.add_argument("--duration", type=float, default=20.0)
    parser.add_argument("--out", type=Path, required=True)
    args = parser.parse_args(argv)
    if args.react and not args.script:
        parser.error("--react needs --script")
    timeline = run_or_exit(run, args)
    print(json.dumps({k: v for k, v in timeline.items() if not k.endswith("voiced_ticks")}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
