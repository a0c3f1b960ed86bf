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
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

from agent.knowledge.grounding import unsupported
from eval.kit import voices
from eval.kit.agent_process import AgentProcess
from eval.kit.call_scoring import score_call, score_recording, scorer
from eval.kit.cases import Case, call_groups, load_cases
from eval.kit.diagnosis import agent_call, join_agent_record
from eval.kit.noise import Line
from eval.kit.placing import TOKEN, Repeats, babble_speakers, kb_chunks, kb_hint, run_call
from eval.kit.ports import free_port_block
from eval.kit.recording import Legs, RecordingError, read_capture, read_stereo, read_two_files
from eval.kit.report import summarize, write_reports
from eval.kit.wire import TICK_MS


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


def _name_value(text: str) -> tuple[str, str]:
    name, equals, value = text.partition("=")
    if not equals or not name.strip():
        raise argparse.ArgumentTypeError(f"expected NAME=VALUE (a setting without AGENT_), got {text!r}")
    return name.strip().lower(), value


def arguments() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="python -m eval.replay", description=__doc__.splitlines()[0])
    parser.add_argument("--kb", type=Path, required=True, help="the KB (with --recording: only its names are used, "
                        "as the scorer's Whisper prompt)")
    parser.add_argument("--cases", type=Path, required=True)
    parser.add_argument("--out", type=Path, default=Path("var/eval/replay"))
    parser.add_argument("--codec", choices=("pcmu", "g722"), default="pcmu")
    parser.add_argument("--transport", choices=("sip", "websocket", "webrtc"), default="sip",
                        help="place the calls over SIP (the eval caller), the WebSocket media stream or the browser "
                        "phone (WebRTC, aiortc as the browser)")
    parser.add_argument("--voices", default=",".join(voices.FLITE), help="caller voices (eval.kit.voices: flite:NAME, "
                        "espeak:NAME, piper), one call each in turn")
    parser.add_argument("--concurrency", type=int, default=1)
    parser.add_argument("--limit", type=int, help="only the first N calls")
    parser.add_argument("--snr", type=float, help="mix noise into the caller's audio at this SNR (dB)")
    parser.add_argument("--noise", choices=("babble", "white"), default="babble")
    parser.add_argument("--loss", type=int, default=0, help="percent of the caller's RTP packets dropped")
    parser.add_argument("--llm", metavar="URL", help="the agent phrases answers with this OpenAI-compatible server "
                        "(AGENT_LLM_URL; e.g. python -m eval.kit.llm_server): the report says who spoke each answer")
    parser.add_argument("--llm-deadline-ms", type=int, help="AGENT_LLM_FIRST_SENTENCE_MS for the agent")
    parser.add_argument("--database-url", metavar="URL", help="the agent keeps its records in this PostgreSQL "
                        "(AGENT_DATABASE_URL; eval.database_outage stops it in the middle of the calls)")
    parser.add_argument("--caller-repeats", action="store_true", help="the caller answers the agent's "
                        "clarifications as the person who asked would: says the question again when asked to, yes "
                        "or no to a confirmation (eval.kit.repeats; SIP only)")
    parser.add_argument("--agent-setting", action="append", default=[], metavar="NAME=VALUE", type=_name_value,
                        help="any other setting for the agent (AGENT_NAME, e.g. record_calls=true); repeatable")
    recorded = parser.add_argument_group("scoring a recorded call instead of placing calls")
    recorded.add_argument("--recording", type=Path, help="stereo WAV (caller and agent legs), the caller's mono WAV "
                          "(with --agent-recording), or a pcap/pcapng of the call's G.711 RTP")
    recorded.add_argument("--agent-recording", type=Path, help="the agent's leg as a mono WAV")
    recorded.add_argument("--caller-channel", type=int, choices=(0, 1), default=0)
    recorded.add_argument("--agent-source", help="for captures: IP[:PORT] the agent's RTP is sent from")
    recorded.add_argument("--call", help="the `call` group of the cases asked in the recording (default: the only one)")
    return parser


def main(argv: list[str] | None = None) -> int:
    parser = arguments()
    args = parser.parse_args(argv)
    if args.recording is not None:
        return main_recorded(args)

    from agent import settings as settings_module
    from agent.models.load import resolve_all
    from agent.speech.vad import SileroVad

    settings = settings_module.parse([], os.environ)
    resolved = resolve_all(settings)
    cases = load_cases(args.cases)
    chosen = list(call_groups(cases).items())[:args.limit or None]
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
    rows, stages = place_calls(args, settings.models_path, chosen, Caller(voices_, line, repeats, hint),
                               scorer(resolved["asr"]), lambda: SileroVad.open(resolved["vad"].location), kb_text)
    report = {"summary": summarize(rows), "cases": rows, "caller_repeats": args.caller_repeats,
              "codec": {"sip": args.codec, "websocket": "L16/16000 (websocket)",
                        "webrtc": "opus/48000 (webrtc)"}[args.transport], "tick_ms": TICK_MS,
              "line": {"snr_db": args.snr, "noise": args.noise if args.snr is not None else None,
                       "loss_pct": args.loss}, "agent_stages_ms": stages}
    write_reports(report, args.out)
    print(json.dumps(report["summary"], indent=2))
    return 0


@dataclass(frozen=True)
class Caller:
    """Who places the calls: in which voices, on what line, answering clarifications or not, with what hint."""

    voices: list[str]
    line: Line
    repeats: Repeats | None
    hint: str


def place_calls(args: argparse.Namespace, models_dir: Path, chosen: list[tuple[str, list[Case]]], caller: Caller,
                transcriber, new_vad, kb_text: str) -> tuple[list[dict], dict]:
    """Every chosen call placed to a fresh agent and scored from the wire, joined with the agent's own record
    of it; with the agent's per-stage breakdown of the same turns."""
    rows: list[dict] = []
    with tempfile.TemporaryDirectory(prefix="replay-agent-") as scratch:
        agent = AgentProcess(Path(scratch), (free_port_block(110), free_port_block(110)), models_dir,
                             kb_dir=args.kb.resolve(), max_calls=max(2, args.concurrency), inactivity_s=60,
                             admin_token=TOKEN, speech_prerender="true",
                             turn_audio_dir=(args.out / "agent-heard").resolve(),
                             **({"llm_url": args.llm} if args.llm else {}),
                             **({"llm_first_sentence_ms": args.llm_deadline_ms} if args.llm_deadline_ms else {}),
                             **({"database_url": args.database_url} if args.database_url else {}),
                             **({"web_phone": "true", "web_phone_address": "127.0.0.1"}
                                if args.transport == "webrtc" else {}),
                             **dict(args.agent_setting))
        try:
            # Calls start once every answer is rendered, as on a line that has been up for a while.
            agent.wait_for("speech.prerendered", 1, timeout=600)

            def one(item: tuple[int, tuple[str, list[Case]]]) -> tuple[list[dict], str | None]:
                index, (call_id, group) = item
                timeline = run_call(agent, call_id, group, args.out, args.codec,
                                    caller.voices[index % len(caller.voices)], caller.line, args.transport,
                                    caller.repeats)
                scored = score_call(group, timeline, args.out / "calls" / call_id, transcriber, new_vad, caller.hint)
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
            shutil.copyfile(agent.log_path, args.out / "agent.log")  # what the agent did, for eval.kit.diagnosis
    return rows, stages


def main_recorded(args: argparse.Namespace) -> int:
    """Score one recorded call against its call group of the cases."""
    from agent import settings as settings_module
    from agent.models.load import resolve_all
    from agent.speech.vad import SileroVad

    calls = call_groups(load_cases(args.cases))
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
