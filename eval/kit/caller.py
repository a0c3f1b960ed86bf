"""A scripted SIP caller built on pjsua2, for tests and evals: it speaks, listens, and times both.

    python -m eval.kit.caller --target sip:agent@127.0.0.1:5060 --port 5072 --question q.wav --out DIR
        [--address IP] [--registrar sip:PBX --user 6001 --password SECRET]
        [--codec PCMU|PCMA|G722] [--question-at 3] [--second q2.wav --barge-in-ms 800]
        [--echo-db -12 --echo-delay-ms 80] [--dtmf '*' (--dtmf-at 12 | --dtmf-after-answer)]
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
import sys
import threading
import time
import wave
from pathlib import Path

import numpy as np
import pjsua2 as pj
import soxr

from agent.sip.port import read_vector
from eval.kit.conversation import Conversation, Step
from eval.kit.reactions import Reactions
from eval.kit.wire import answer_over, voiced_ticks

RATE = 16000
TICK = 320  # samples per 20 ms
CODECS = {"PCMU": "PCMU/8000/1", "PCMA": "PCMA/8000/1", "G722": "G722/16000/1"}


def load_wav(path: Path) -> np.ndarray:
    """Mono 16-bit WAV at any rate, as int16 at 16 kHz."""
    with wave.open(str(path)) as wav:
        audio = np.frombuffer(wav.readframes(wav.getnframes()), dtype="<i2").astype(np.float32)
        if wav.getnchannels() != 1:
            audio = audio.reshape(-1, wav.getnchannels()).mean(axis=1)
        rate = wav.getframerate()
    if rate != RATE:
        audio = soxr.resample(audio, rate, RATE)
    return np.clip(audio, -32768, 32767).astype(np.int16)


def save_wav(path: Path, audio: np.ndarray) -> None:
    with wave.open(str(path), "wb") as wav:
        wav.setnchannels(1)
        wav.setsampwidth(2)
        wav.setframerate(RATE)
        wav.writeframes(audio.astype("<i2").tobytes())


class CallerPort(pj.AudioMediaPort):
    """Plays scheduled audio (plus an optional echo of what it hears) and records every tick."""

    def __init__(self, echo_gain: float, echo_delay_ticks: int) -> None:
        super().__init__()
        self.lock = threading.Lock()
        self.tick = 0
        self.queue: list[np.ndarray] = []  # frames waiting to be sent
        self.sent: list[np.ndarray] = []
        self.received: list[np.ndarray] = []
        self.echo_gain, self.echo_delay = echo_gain, echo_delay_ticks
        self.closed = False
        self.clock: tuple[float, int, float] | None = None
        """(Unix time of tick 1, the latest tick, its Unix time): maps ticks to the agent's clock (see tick_time)."""
        fmt = pj.MediaFormatAudio()
        fmt.init(pj.PJMEDIA_FORMAT_L16, RATE, 1, 20000, 16)
        self.createPort("caller", fmt)

    def play(self, audio: np.ndarray) -> int:
        """Queue audio to send now; returns the tick its first frame goes out."""
        with self.lock:
            padded = np.concatenate([audio, np.zeros(-len(audio) % TICK, dtype=np.int16)])
            self.queue.extend(padded.reshape(-1, TICK))
            return self.tick + 1

    def onFrameRequested(self, frame: pj.MediaFrame) -> None:  # noqa: N802
        if getattr(self, "closed", True):
            return
        now = time.time()
        with self.lock:
            self.tick += 1
            self.clock = (self.clock[0] if self.clock else now, self.tick, now)
            out = self.queue.pop(0) if self.queue else np.zeros(TICK, dtype=np.int16)
            if self.echo_gain and len(self.received) > self.echo_delay:
                echo = self.received[-1 - self.echo_delay].astype(np.float32) * self.echo_gain
                out = np.clip(out.astype(np.float32) + echo, -32768, 32767).astype(np.int16)
            self.sent.append(out)
        frame.type = pj.PJMEDIA_FRAME_TYPE_AUDIO
        frame.buf = pj.ByteVector(out.tobytes())
        frame.size = out.nbytes

    def onFrameReceived(self, frame: pj.MediaFrame) -> None:  # noqa: N802
        if getattr(self, "closed", True):
            return
        pcm = (np.frombuffer(read_vector(frame.buf), dtype="<i2").astype(np.int16) if frame.size
               else np.zeros(TICK, np.int16))
        with self.lock:
            self.received.append(pcm if len(pcm) == TICK else np.resize(pcm, TICK))


class CallerCall(pj.Call):
    def __init__(self, account: pj.Account, port: CallerPort, accept_transfer: bool = False,
                 call_id: int = pj.PJSUA_INVALID_ID) -> None:
        """`call_id`: an incoming call's (eval.kit.person answers with this class too)."""
        super().__init__(account, call_id)
        self.account = account
        self.port = port
        self.state = "calling"
        self.status = 0
        self.accept_transfer = accept_transfer
        self.transferred: CallerCall | None = None
        """The call to the transfer target, once the agent has transferred this one (REFER)."""
        self.transfer_to = ""
        self.replaced_by: CallerCall | None = None
        """The call that took this one's place (an INVITE with Replaces: the agent handed its call over)."""

    def onCallTransferRequest(self, prm) -> None:  # noqa: N802
        """The agent transfers us (REFER): call the target as a phone would, with the same audio."""
        self.transfer_to = prm.dstUri
        if not self.accept_transfer:
            prm.statusCode = 603
            return
        self.transferred = CallerCall(self.account, self.port)
        prm.newCall = self.transferred

    def onCallReplaced(self, prm) -> None:  # noqa: N802
        """Another phone's call replaces this one (RFC 3891): it goes on with the same audio."""
        self.replaced_by = CallerCall(self.account, self.port, call_id=prm.newCallId)
        prm.newCall = self.replaced_by

    def onCallState(self, prm) -> None:  # noqa: N802
        info = self.getInfo()
        self.status = info.lastStatusCode
        if info.state == pj.PJSIP_INV_STATE_CONFIRMED:
            self.state = "confirmed"
        elif info.state == pj.PJSIP_INV_STATE_DISCONNECTED:
            self.state = "disconnected"

    def onCallMediaState(self, prm) -> None:  # noqa: N802
        info = self.getInfo()  # keep it alive: info.media's elements point into it
        for index, media in enumerate(info.media):
            if media.type == pj.PJMEDIA_TYPE_AUDIO and media.status == pj.PJSUA_CALL_MEDIA_ACTIVE:
                audio = self.getAudioMedia(index)
                audio.startTransmit(self.port)
                self.port.startTransmit(audio)


def account_config(args: argparse.Namespace, name: str) -> pj.AccountConfig:
    """A user agent's account at --address/--port (media from --rtp-port); with --registrar, a softphone's
    account on that PBX, registered (and every request authenticated) as --user."""
    config = pj.AccountConfig()
    config.idUri = f"sip:{name}@{args.address}:{args.port}"
    if args.registrar:
        registrar = args.registrar.split(":", 1)[1].split(";")[0]
        config.idUri = f"sip:{args.user}@{registrar}"
        config.regConfig.registrarUri = args.registrar
        config.sipConfig.authCreds.append(pj.AuthCredInfo("digest", "*", args.user, 0, args.password))
    media = config.mediaConfig.transportConfig
    media.port, media.portRange, media.boundAddress = args.rtp_port, 100, args.address
    return config


def wait_registered(endpoint: pj.Endpoint, account: pj.Account, registrar: str | None) -> None:
    if not registrar:
        return
    deadline = time.monotonic() + 15
    while not account.getInfo().regIsActive:
        if time.monotonic() > deadline:
            raise SystemExit(f"not registered with {registrar} (status {account.getInfo().regStatus})")
        endpoint.libHandleEvents(20)


def add_account_arguments(parser: argparse.ArgumentParser, user: str) -> None:
    parser.add_argument("--address", default="127.0.0.1", help="the address SIP and RTP are bound to")
    parser.add_argument("--registrar", help="register with this PBX first (sip:HOST[:PORT]), as --user")
    parser.add_argument("--user", default=user)
    parser.add_argument("--password", default="")


def write_call(out: Path, timeline: dict, received: list[np.ndarray], sent: list[np.ndarray]) -> None:
    """A call's outputs, as every eval caller writes them: DIR/received.wav, DIR/sent.wav (16 kHz) and
    DIR/timeline.json, completed with the tick counts and voiced ticks of both directions."""
    timeline["ticks"] = len(received)
    timeline["received_voiced_ticks"] = voiced_ticks(received)
    timeline["sent_voiced_ticks"] = voiced_ticks(sent)
    out.mkdir(parents=True, exist_ok=True)
    save_wav(out / "received.wav", np.concatenate(received) if received else np.zeros(0, np.int16))
    save_wav(out / "sent.wav", np.concatenate(sent) if sent else np.zeros(0, np.int16))
    (out / "timeline.json").write_text(json.dumps(timeline))


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


def run(args: argparse.Namespace) -> dict:
    endpoint = pj.Endpoint()
    endpoint.libCreate()
    config = pj.EpConfig()
    config.uaConfig.threadCnt = 0
    config.medConfig.clockRate = RATE
    config.medConfig.sndClockRate = RATE
    config.uaConfig.mainThreadOnly = False
    # Silence suppression (a DTX phone): no RTP at all while the caller is quiet.
    config.medConfig.noVad = not args.silence_suppression
    config.medConfig.ecTailLen = 0
    config.medConfig.txDropPct = args.loss  # a lossy line: this share of the caller's RTP packets never leaves
    config.logConfig.level = config.logConfig.consoleLevel = int(__import__("os").environ.get("CALLER_LOG", "1"))
    endpoint.libInit(config)
    transport = pj.TransportConfig()
    transport.port, transport.boundAddress = args.port, args.address
    endpoint.transportCreate(pj.PJSIP_TRANSPORT_TCP if args.tcp else pj.PJSIP_TRANSPORT_UDP, transport)
    endpoint.libStart()
    endpoint.audDevManager().setNullDev()
    for codec in endpoint.codecEnum2():
        endpoint.codecSetPriority(codec.codecId, 255 if codec.codecId == CODECS[args.codec] else 0)
    account = pj.Account()
    account.create(account_config(args, "caller"))
    wait_registered(endpoint, account, args.registrar)
    port = CallerPort(10 ** (args.echo_db / 20) if args.echo_db is not None else 0.0, args.echo_delay_ms // 20)
    call = CallerCall(account, port, args.accept_transfer)
    prm = pj.CallOpParam(True)
    call.makeCall(args.target + (";transport=tcp" if args.tcp else ""), prm)

    timeline: dict = {"codec": args.codec}
    script = load_script(args.script) if args.script else None
    reactions = Reactions(json.loads(args.script.read_text()), args.hint, load_wav) if args.react else None

    def received_since(n: int, port: CallerPort = port) -> np.ndarray:
        with port.lock:
            frames = port.received[timeline["steps"][n]["start_tick"]:]
        return np.concatenate(frames) if frames else np.zeros(0, np.int16)

    conversation = script_conversation(script, args.quiet_ms, reactions, received_since) if script else None
    fed = 0
    question = load_wav(args.question) if args.question else None
    second = load_wav(args.second) if args.second else None
    started = time.monotonic()
    answer_seen_after = None
    while time.monotonic() - started < args.duration and call.state != "disconnected":
        endpoint.libHandleEvents(10)
        elapsed = time.monotonic() - started
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
        if question is not None and "question_tick" not in timeline and elapsed >= args.question_at:
            timeline["question_tick"] = port.play(question)
            timeline["question_end_tick"] = timeline["question_tick"] + len(question) // TICK
        if second is not None and args.second_at is not None and "second_tick" not in timeline:
            if elapsed >= args.second_at:
                timeline["second_tick"] = port.play(second)
                timeline["second_end_tick"] = timeline["second_tick"] + len(second) // TICK
        elif second is not None and "question_end_tick" in timeline and "second_tick" not in timeline:
            with port.lock:
                heard = voiced_ticks(port.received[timeline["question_end_tick"]:])
            if heard and answer_seen_after is None:
                answer_seen_after = timeline["question_end_tick"] + heard[0]
            if answer_seen_after is not None and port.tick >= answer_seen_after + args.barge_in_ms // 20:
                timeline["second_tick"] = port.play(second)
                timeline["second_end_tick"] = timeline["second_tick"] + len(second) // TICK
        if args.dtmf and "dtmf_tick" not in timeline and _dtmf_due(args, elapsed, port, timeline):
            call.dialDtmf(args.dtmf)
            timeline["dtmf_tick"] = port.tick
        if args.hold_at is not None and "hold_tick" not in timeline and elapsed >= args.hold_at:
            call.setHold(pj.CallOpParam(True))
            timeline["hold_tick"] = port.tick
        if args.unhold_at is not None and "unhold_tick" not in timeline and elapsed >= args.unhold_at:
            unhold = pj.CallOpParam(True)
            unhold.opt.flag = pj.PJSUA_CALL_UNHOLD
            call.reinvite(unhold)
            timeline["unhold_tick"] = port.tick
    timeline["ended_by"] = "agent" if call.state == "disconnected" else "caller"
    timeline["status"] = call.status
    if call.transfer_to:
        timeline["transfer_to"] = call.transfer_to
    if call.transferred is not None:  # stay on the transferred call a while, then hang it up
        settle = time.monotonic() + args.stay_transferred_s
        while time.monotonic() < settle and call.transferred.state != "disconnected":
            endpoint.libHandleEvents(10)
        timeline["transferred_status"] = call.transferred.status
        timeline["transferred_ended_by"] = "other" if call.transferred.state == "disconnected" else "caller"
        if call.transferred.state != "disconnected":
            call.transferred.hangup(pj.CallOpParam(True))
            for _ in range(100):
                endpoint.libHandleEvents(10)
                if call.transferred.state == "disconnected":
                    break
    if call.state != "disconnected":
        call.hangup(pj.CallOpParam(True))
        for _ in range(100):
            endpoint.libHandleEvents(10)
            if call.state == "disconnected":
                break
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
    del call, port, conversation, received_since  # the last two hold the port too
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
    timeline = run(args)
    print(json.dumps({k: v for k, v in timeline.items() if not k.endswith("voiced_ticks")}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
