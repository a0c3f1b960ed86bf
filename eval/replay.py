"""Replay eval cases as real SIP calls and score what the caller heard, measured on the wire.

    python -m eval.replay --kb DIR --cases FILE [--out DIR] [--codec pcmu|g722] [--concurrency N] [--llm URL]
    python -m eval.replay --kb DIR --cases FILE --recording call.wav|caller.wav --agent-recording agent.wav|
                          call.pcap --agent-source IP[:PORT] [--call ID]

Starts its own agent on free loopback ports with that KB, places one real call per `call` group
(the eval caller, pjsua2), asks each question in turn (the case's WAV, or its `say` text spoken by
a flite voice unlike the agent's), then scores every answer: Whisper transcript of the received
audio, correctness against `expect_any` / `expect_abstain`, latency from the question's last voiced
frame to the first voiced answer frame, and barge-in reaction time. Writes report.json, report.md
and latency.png. A recorded call (stereo WAV, two WAVs, or a G.711 capture) is scored the same way:
the caller's utterances, found by VAD, are the call group's questions in order.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from agent.knowledge.grounding import unsupported
from eval import voices
from eval.agent_process import REPO, AgentProcess
from eval.call_scoring import score_call, score_recording, scorer
from eval.caller import load_wav, save_wav
from eval.cases import PAUSE, Case, load_cases
from eval.diagnosis import agent_call, join_agent_record
from eval.noise import Line, babble_talkers, mix
from eval.ports import free_port_block
from eval.recording import Legs, RecordingError, read_capture, read_stereo, read_two_files
from eval.repeats import NO, YES, about
from eval.report import summarize, write_reports
from eval.wire import TICK_MS

TOKEN = "replay-eval-token"



def question_audio(case: Case, folder: Path, voice: str, line: Line | None = None) -> Path:
    """The case's WAV, or its text spoken in a caller voice (eval.voices) at 8 kHz; on a noisy `line`, with its
    noise mixed in."""
    if case.audio is not None:
        return noisy_line(case.audio, case.id, folder, line)
    return spoken(case.say, case.id, folder, voice, line, case.pause_ms)


def spoken(text: str, name: str, folder: Path, voice: str, line: Line | None = None, pause_ms: int = 0) -> Path:
    """`text` said by a caller voice (eval.voices) at 8 kHz, as folder/NAME.wav, with `pause_ms` of silence at
    each PAUSE mark (a hesitation); on a noisy `line`, with its noise mixed in."""
    parts = []
    for n, part in enumerate(p.strip() for p in text.split(PAUSE)):
        parts.append(load_wav(voices.say(part, voice, folder / f"{name}-{n}.wav")))
    if len(parts) > 1:  # a synthesizer pads each part with silence: the hesitation is the pause alone
        parts = [_trim(part, start=n > 0, end=n < len(parts) - 1) for n, part in enumerate(parts)]
    pause = np.zeros(pause_ms * 16, np.int16)  # load_wav gives 16 kHz
    wav = folder / f"{name}.wav"
    save_wav(wav, np.concatenate([x for part in parts for x in (pause, part)][1:]))
    return noisy_line(wav, name, folder, line)


def _trim(pcm: np.ndarray, start: bool, end: bool, floor: int = 300) -> np.ndarray:
    """`pcm` without its leading (`start`) and trailing (`end`) 10 ms frames quieter than `floor`."""
    loud = [i for i in range(0, len(pcm), 160) if np.abs(pcm[i:i + 160]).max(initial=0) >= floor]
    if not loud:
        return pcm
    return pcm[loud[0] if start else 0:loud[-1] + 160 if end else len(pcm)]


def noisy_line(wav: Path, name: str, folder: Path, line: Line | None) -> Path:
    if line is None or line.snr_db is None:
        return wav
    noisy = folder / f"{name}-snr{line.snr_db:g}.wav"
    speech = load_wav(wav)  # 16 kHz
    save_wav(noisy, mix(speech, line.noise_for(len(speech)), line.snr_db))
    return noisy


def babble_speakers(cases: list[Case], folder: Path) -> tuple[np.ndarray, ...]:
    """The babble talkers' questions (eval.noise.babble_talkers) as 16 kHz audio."""
    folder.mkdir(parents=True, exist_ok=True)
    return tuple(load_wav(question_audio(c, folder, voice)) for c, voice in babble_talkers(cases))


def run_call(agent: AgentProcess, call_id: str, cases: list[Case], out: Path, codec: str, voice: str,
             line: Line | None = None, transport: str = "sip", repeats: Repeats | None = None) -> dict:
    """Place one call asking `cases` in order; return the caller's timeline. With `repeats`, the caller answers
    the agent's clarifications as the person who asked would (SIP only)."""
    folder = out / "calls" / call_id
    folder.mkdir(parents=True, exist_ok=True)
    script = [{"audio": str(question_audio(c, folder, voice, line)), "barge_in_at_ms": c.barge_in_at_ms}
              for c in cases]
    if repeats is not None:
        replies = {kind: str(spoken(text, f"{kind}-{voice}", folder, voice, line)) for kind, text in
                   (("yes", YES), ("no", NO))}
        for step, case in zip(script, cases, strict=True):
            again = str(case.repeat_audio) if case.repeat_audio is not None else step["audio"]
            step.update(about=sorted(about(case, repeats.chunks)), repeat_audio=again, yes_audio=replies["yes"],
                        no_audio=replies["no"])
    (folder / "script.json").write_text(json.dumps(script))
    base = free_port_block(110)
    duration = (20 + 25 * len(cases)) * (2 if repeats is not None else 1)
    command = [sys.executable, "-m", "eval.caller", "--target", agent.uri, "--port", str(base), "--rtp-port",
               str(base + 2), "--codec", codec.upper(), "--script", str(folder / "script.json"),
               "--duration", str(duration), "--out", str(folder), "--loss", str(line.loss_pct if line else 0)]
    if repeats is not None:
        command += ["--react", "--hint", repeats.hint]
    if transport == "websocket":  # the same script over the WebSocket media stream (16 kHz PCM, no codec, no loss)
        command = [sys.executable, "-m", "eval.ws_caller", "--url",
                   f"ws://127.0.0.1:{agent.http_port}/ws/media?token={TOKEN}", "--script", str(folder / "script.json"),
                   "--duration", str(duration), "--out", str(folder)]
    if transport == "webrtc":  # the same script on the browser phone, aiortc in the browser's place (Opus)
        command = [sys.executable, "-m", "eval.rtc_caller", "--url", f"http://127.0.0.1:{agent.http_port}",
                   "--script", str(folder / "script.json"), "--duration", str(duration), "--out", str(folder)]
    result = subprocess.run(command, cwd=REPO, capture_output=True, text=True, timeout=duration + 60)
    if result.returncode != 0:
        return {"error": f"caller failed: {result.stderr.strip()[-300:]}"}
    return json.loads((folder / "timeline.json").read_text())


def kb_chunks(kb_dir: Path) -> list:
    """The KB's chunks, as the agent splits them (the caller's and the scorer's knowledge of the KB's words)."""
    from agent.knowledge.chunking import split_document
    from agent.knowledge.scan import scan

    documents = scan(kb_dir, 1 << 20, 1 << 30).documents.values()
    return [c for d in documents for c in split_document(d.path, d.text)]


def kb_hint(kb_dir: Path) -> str:
    """The KB's names and words as Whisper's prompt: the scorer listens like a caller who knows the
    company's names (tiny.en otherwise hears "Quarry Lane" as "Corrie Lane")."""
    from agent.knowledge.vocabulary import chunks_hint

    return chunks_hint(kb_chunks(kb_dir))


@dataclass(frozen=True)
class Repeats:
    """What a caller who answers the agent's clarifications knows: the KB's chunks (what each question is about,
    eval.repeats) and its words (the hint its Whisper hears the agent with)."""

    chunks: list
    hint: str


def _verdict(row: dict) -> str:
    if "error" in row:
        return "ERROR"
    return "interrupted" if row.get("interrupted") else ("ok" if row.get("correct") else "BAD")


def read_legs(args: argparse.Namespace) -> Legs:
    """The recorded call the arguments name."""
    if args.recording.suffix.lower() in (".pcap", ".pcapng", ".cap"):
        if not args.agent_source:
            raise RecordingError("a capture needs --agent-source IP[:PORT] (where the agent's RTP comes from)")
        return read_capture(args.recording, args.agent_source)
    if args.agent_recording is not None:
        return read_two_files(args.recording, args.agent_recording)
    return read_stereo(args.recording, args.caller_channel)


def records_caught_up(agent: AgentProcess, sip_call_ids: list[str], timeout_s: float = 180) -> bool:
    """Wait until the agent's records hold every one of these calls to its end (the writer writes in order, so a
    call's end comes after its turns); a store that is away meanwhile answers with an error, and is asked again."""
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        reply = agent.http("GET", "/calls?limit=500", TOKEN)
        if reply.status_code == 200:
            ended = {c["sip_call_id"] for c in reply.json()["calls"] if c.get("ended") is not None}
            if ended.issuperset(sip_call_ids):
                return True
        time.sleep(0.5)
    return False


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m eval.replay", description=__doc__.splitlines()[0])
    parser.add_argument("--kb", type=Path, required=True, help="the KB (with --recording: only its names are used, "
                        "as the scorer's Whisper prompt)")
    parser.add_argument("--cases", type=Path, required=True)
    parser.add_argument("--out", type=Path, default=Path("var/eval/replay"))
    parser.add_argument("--codec", choices=("pcmu", "g722"), default="pcmu")
    parser.add_argument("--transport", choices=("sip", "websocket", "webrtc"), default="sip",
                        help="place the calls over SIP (the eval caller), the WebSocket media stream or the browser "
                        "phone (WebRTC, aiortc as the browser)")
    parser.add_argument("--voices", default=",".join(voices.FLITE), help="caller voices (eval.voices: flite:NAME, "
                        "espeak:NAME, piper), one call each in turn")
    parser.add_argument("--concurrency", type=int, default=1)
    parser.add_argument("--limit", type=int, help="only the first N calls")
    parser.add_argument("--snr", type=float, help="mix noise into the caller's audio at this SNR (dB)")
    parser.add_argument("--noise", choices=("babble", "white"), default="babble")
    parser.add_argument("--loss", type=int, default=0, help="percent of the caller's RTP packets dropped")
    parser.add_argument("--llm", metavar="URL", help="the agent phrases answers with this OpenAI-compatible server "
                        "(AGENT_LLM_URL; e.g. python -m eval.llm_server): the report says who spoke each answer")
    parser.add_argument("--llm-deadline-ms", type=int, help="AGENT_LLM_FIRST_SENTENCE_MS for the agent")
    parser.add_argument("--database-url", metavar="URL", help="the agent keeps its records in this PostgreSQL "
                        "(AGENT_DATABASE_URL; eval.database_outage stops it in the middle of the calls)")
    parser.add_argument("--caller-repeats", action="store_true", help="the caller answers the agent's "
                        "clarifications as the person who asked would: says the question again when asked to, yes "
                        "or no to a confirmation (eval.repeats; SIP only)")
    recorded = parser.add_argument_group("scoring a recorded call instead of placing calls")
    recorded.add_argument("--recording", type=Path, help="stereo WAV (caller and agent legs), the caller's mono WAV "
                          "(with --agent-recording), or a pcap/pcapng of the call's G.711 RTP")
    recorded.add_argument("--agent-recording", type=Path, help="the agent's leg as a mono WAV")
    recorded.add_argument("--caller-channel", type=int, choices=(0, 1), default=0)
    recorded.add_argument("--agent-source", help="for captures: IP[:PORT] the agent's RTP is sent from")
    recorded.add_argument("--call", help="the `call` group of the cases asked in the recording (default: the only one)")
    args = parser.parse_args(argv)
    if args.recording is not None:
        return main_recorded(args)

    from agent import settings as settings_module
    from agent.models.load import resolve_all
    from agent.speech.vad import SileroVad

    settings = settings_module.parse([], os.environ)
    resolved = resolve_all(settings)
    transcriber = scorer(resolved["asr"])
    cases = load_cases(args.cases)
    calls: dict[str, list[Case]] = {}
    for case in cases:
        calls.setdefault(case.call, []).append(case)
    chosen = list(calls.items())[:args.limit] if args.limit else list(calls.items())
    voices_ = args.voices.split(",")
    for voice in voices_:
        try:
            voices.parse(voice)
        except ValueError as exc:
            parser.error(str(exc))
    if args.caller_repeats and args.transport != "sip":
        parser.error("--caller-repeats is for SIP calls (--transport sip)")
    hint = kb_hint(args.kb)
    kb_text = "\n".join(p.read_text(errors="replace") for p in sorted(args.kb.rglob("*")) if p.is_file())
    repeats = Repeats(kb_chunks(args.kb), hint) if args.caller_repeats else None
    args.out.mkdir(parents=True, exist_ok=True)
    line = Line(args.snr, args.noise, args.loss,
                babble_speakers(cases, args.out / "babble") if args.snr is not None and args.noise == "babble" else ())
    rows: list[dict] = []
    with tempfile.TemporaryDirectory(prefix="replay-agent-") as scratch:
        agent = AgentProcess(Path(scratch), (free_port_block(110), free_port_block(110)), settings.models_path,
                             kb_dir=args.kb.resolve(), max_calls=max(2, args.concurrency), inactivity_s=60,
                             admin_token=TOKEN, speech_prerender="true",
                             turn_audio_dir=(args.out / "agent-heard").resolve(),
                             **({"llm_url": args.llm} if args.llm else {}),
                             **({"llm_first_sentence_ms": args.llm_deadline_ms} if args.llm_deadline_ms else {}),
                             **({"database_url": args.database_url} if args.database_url else {}),
                             **({"web_phone": "true", "web_phone_address": "127.0.0.1"}
                                if args.transport == "webrtc" else {}))
        try:
            # Calls start once every answer is rendered, as on a line that has been up for a while.
            agent.wait_for("speech.prerendered", 1, timeout=600)

            def one(item: tuple[int, tuple[str, list[Case]]]) -> tuple[list[dict], str | None]:
                index, (call_id, group) = item
                timeline = run_call(agent, call_id, group, args.out, args.codec, voices_[index % len(voices_)], line,
                                    args.transport, repeats)
                scored = score_call(group, timeline, args.out / "calls" / call_id, transcriber,
                                    lambda: SileroVad.open(resolved["vad"].location), hint)
                print(f"[{index + 1}/{len(chosen)}] call {call_id}: " + ", ".join(
                    f"{r['id']} {_verdict(r)}" for r in scored), flush=True)
                return scored, timeline.get("sip_call_id")

            with ThreadPoolExecutor(max_workers=args.concurrency) as pool:
                placed = list(pool.map(one, enumerate(chosen)))
            # The agent's records are read once every call is over: a store that was away meanwhile
            # (eval.database_outage) has caught up by then, and reading it never delays the next call.
            if not records_caught_up(agent, [sip for _, sip in placed if sip]):
                print("the agent's records did not catch up within 180 s: some rows lack its record", flush=True)
            for scored, sip_call_id in placed:
                record = agent_call(agent, sip_call_id, TOKEN)
                join_agent_record(scored, record.get("turns", []),
                                  args.out / "agent-heard" / record["id"] if record else None)
                for row in scored:
                    row["sip_call_id"] = sip_call_id
                    if row.get("agent_answerer"):  # an independent count: the agent checks the passages only
                        row["unsupported"] = unsupported(row.get("agent_answer") or "", kb_text)
                rows.extend(scored)
            # The agent's own per-stage breakdown of the same turns: where the time went.
            stages = agent.http("GET", "/metrics/summary").json()["stages"]
        finally:
            agent.stop()
            shutil.copyfile(agent.log_path, args.out / "agent.log")  # what the agent did, for eval.diagnosis
    report = {"summary": summarize(rows), "cases": rows, "caller_repeats": args.caller_repeats,
              "codec": {"sip": args.codec, "websocket": "L16/16000 (websocket)",
                        "webrtc": "opus/48000 (webrtc)"}[args.transport], "tick_ms": TICK_MS,
              "line": {"snr_db": args.snr, "noise": args.noise if args.snr is not None else None,
                       "loss_pct": args.loss}, "agent_stages_ms": stages}
    write_reports(report, args.out)
    print(json.dumps(report["summary"], indent=2))
    return 0


def main_recorded(args: argparse.Namespace) -> int:
    """Score one recorded call against its call group of the cases."""
    from agent import settings as settings_module
    from agent.models.load import resolve_all
    from agent.speech.vad import SileroVad

    calls: dict[str, list[Case]] = {}
    for case in load_cases(args.cases):
        calls.setdefault(case.call, []).append(case)
    if args.call is None and len(calls) != 1:
        print(f"--call is needed: the cases have {len(calls)} call groups", file=sys.stderr)
        return 2
    group = calls.get(args.call) if args.call is not None else next(iter(calls.values()))
    if group is None:
        print(f"no call group {args.call!r} in {args.cases}", file=sys.stderr)
        return 2
    try:
        legs = read_legs(args)
    except (RecordingError, OSError) as exc:
        print(f"cannot read the recording: {exc}", file=sys.stderr)
        return 2
    settings = settings_module.parse([], os.environ)
    resolved = resolve_all(settings)
    rows = score_recording(group, legs, scorer(resolved["asr"]),
                           lambda: SileroVad.open(resolved["vad"].location), kb_hint(args.kb))
    report = {"summary": summarize(rows), "cases": rows, "recording": str(args.recording), "tick_ms": TICK_MS}
    args.out.mkdir(parents=True, exist_ok=True)
    write_reports(report, args.out)
    print(json.dumps(report["summary"], indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
