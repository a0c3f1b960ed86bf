"""Hearing the question: the cases spoken down a telephone line, heard by the agent's Whisper, answered
by its KB — without SIP, so a change to hearing can be measured in a minute.

    python -m eval.hearing --kb kb --cases eval/cases.jsonl [--voices slt,rms,awb] [--full-window]
        [--snr DB [--noise babble|white]] [--json OUT]

Each question is spoken by a flite voice at 8 kHz, sent through G.711 μ-law and back, resampled to
16 kHz with the agent's soxr resampler, transcribed by the agent's Transcriber with the KB's
vocabulary hint, and answered by the KB (one memory per call group, as on a call); when the agent
asks the caller to repeat (agent.call.clarify), the question is spoken again a quarter slower. Per
case: what was heard, the question's WER, the answer and whether it is right, a right refusal, or
a wrong answer. With --snr, noise is mixed into the caller's 8 kHz speech before the line, as
eval.replay's --snr does (babble: four other callers saying other questions, see eval.noise). The
end-to-end number on real calls is eval.replay's; this one isolates hearing from telephony.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

from eval.cases import Case, load_cases
from eval.noise import Line, babble_talkers, mix
from eval.retrieval import build_knowledge, contains_any
from eval.scoring import word_error_rate

VOICES = ("slt", "rms", "awb")


def ulaw_encode(pcm: np.ndarray) -> bytes:
    """int16 samples to G.711 μ-law bytes (the encoder a PCMU call applies)."""
    x = pcm.astype(np.int32)
    sign = np.where(x < 0, 0x80, 0)
    # The reference encoder works on 14 bits (x >> 2, rounding toward minus infinity) and clips at 8159.
    fourteen = np.where(x < 0, -(x >> 2), x >> 2)
    magnitude = np.minimum((np.minimum(fourteen, 8159) << 2) + 0x84, 32767)
    exponent = np.floor(np.log2(magnitude)).astype(np.int32) - 7
    mantissa = (magnitude >> (exponent + 3)) & 0x0F
    return (~(sign | (exponent << 4) | mantissa) & 0xFF).astype(np.uint8).tobytes()


def telephone(pcm8: np.ndarray) -> np.ndarray:
    """8 kHz speech as the agent gets it from a PCMU call: μ-law round trip, then 16 kHz float."""
    from eval.asr import to_16k
    from eval.recording import ulaw_decode

    return to_16k(ulaw_decode(ulaw_encode(pcm8)))


REPEAT_STRETCH = 1.25
"""A caller asked to repeat says it again, a quarter slower."""


def speak(text: str, voice: str, folder: Path, stretch: float = 1.0) -> np.ndarray:
    """`text` in a flite voice (`stretch` > 1: slower), as 8 kHz int16."""
    import wave

    raw, wav = folder / "raw.wav", folder / "line.wav"
    subprocess.run(["flite", "-voice", voice, "--setf", f"duration_stretch={stretch}", "-t", text, "-o", str(raw)],
                   check=True)
    # -D: no dither, so a case sounds the same on every run (sox dithers randomly by default).
    subprocess.run(["sox", "-D", str(raw), "-r", "8000", "-b", "16", "-c", "1", str(wav)], check=True)
    with wave.open(str(wav)) as f:
        return np.frombuffer(f.readframes(f.getnframes()), dtype="<i2").astype(np.int16)


def babble_voices(cases: list[Case], folder: Path) -> tuple[np.ndarray, ...]:
    """The babble eval.replay mixes in (eval.noise.babble_talkers), here at 8 kHz."""
    return tuple(speak(c.say, voice, folder) for c, voice in babble_talkers(cases))


def caller_audio(text: str, voice: str, folder: Path, stretch: float, line: Line | None) -> np.ndarray:
    """What the agent gets when the caller says `text`: spoken, noise mixed in on a noisy `line`, down the line."""
    pcm8 = speak(text, voice, folder, stretch)
    if line is not None and line.snr_db is not None:
        pcm8 = mix(pcm8, line.noise_for(len(pcm8)), line.snr_db)
    return telephone(pcm8)


def evaluate(transcriber, knowledge, cases: list[Case], voice: str, folder: Path, hint: bool = True,
             line: Line | None = None) -> list[dict]:
    """Each case as on a call: heard, answered or asked again (then repeated a quarter slower, once)."""
    from agent.call.clarify import listen_again, should_ask_again
    from agent.knowledge.memory import CallMemory

    memories: dict[str, CallMemory] = {}
    rows = []
    for case in cases:
        if not case.say:
            continue
        memory = memories.setdefault(case.call, CallMemory())
        heard, asked_again, stretch, second_listen = [], False, 1.0, ""
        prompt = knowledge.vocabulary_hint() if hint else None
        while True:
            audio = caller_audio(case.say, voice, folder, stretch, line)
            started = time.perf_counter()
            transcript = transcriber.transcribe(audio, prompt)
            asr_ms = (time.perf_counter() - started) * 1000
            reply = knowledge.draft(memory, transcript.text)
            heard.append(transcript.text)
            if not should_ask_again(transcript, reply, asked_again):
                break
            second = listen_again(transcriber, knowledge, memory, audio, prompt)
            if second.found:
                transcript, reply, second_listen = second.transcript, second.reply, second.transcript.text
                break
            asked_again, stretch = True, REPEAT_STRETCH
        knowledge.commit(memory, reply)
        correct = reply.abstained if case.expect_abstain else (not reply.abstained and
                                                              contains_any(reply.text, case.expect_any))
        rows.append({"id": case.id, "voice": voice, "said": case.say, "heard": heard[0], "asked_again": asked_again,
                     "heard_again": heard[1] if asked_again else None,
                     "second_listen": second_listen,
                     "question_wer": round(word_error_rate(case.say, heard[0]), 3),
                     "avg_logprob": round(transcript.avg_logprob, 3),
                     "no_speech_prob": round(transcript.no_speech_prob, 3), "evidence": round(reply.evidence, 3),
                     "answer": reply.text, "abstained": reply.abstained, "out_of_kb": case.expect_abstain,
                     "correct": correct, "wrong_answer": not reply.abstained and not correct,
                     "asr_ms": round(asr_ms, 1), "audio_s": round(transcript.audio_s, 2),
                     "fallback": transcript.fallback})
    return rows


def summarize(rows: list[dict]) -> dict:
    answerable = [r for r in rows if not r["out_of_kb"]]
    out_of_kb = [r for r in rows if r["out_of_kb"]]
    return {"n": len(rows),
            "answer_accuracy": round(sum(r["correct"] for r in answerable) / max(1, len(answerable)), 4),
            "abstain_accuracy": round(sum(r["correct"] for r in out_of_kb) / max(1, len(out_of_kb)), 4),
            "question_wer": round(statistics.mean(r["question_wer"] for r in rows), 4) if rows else None,
            "asked_again": sum(r["asked_again"] for r in rows),
            "answered_on_second_listen": sum(bool(r["second_listen"]) for r in rows),
            "wrong_answers": sum(r["wrong_answer"] for r in rows),
            "heard_exactly": sum(r["question_wer"] == 0 for r in rows),
            "asr_p50_ms": round(float(np.percentile([r["asr_ms"] for r in rows], 50)), 1) if rows else None,
            "asr_p95_ms": round(float(np.percentile([r["asr_ms"] for r in rows], 95)), 1) if rows else None}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m eval.hearing", description=__doc__.splitlines()[0])
    parser.add_argument("--kb", type=Path, required=True)
    parser.add_argument("--cases", type=Path, required=True)
    parser.add_argument("--voices", default=",".join(VOICES))
    parser.add_argument("--full-window", action="store_true", help="decode in Whisper's 30 s window")
    parser.add_argument("--no-hint", action="store_true", help="without the KB's vocabulary as Whisper's prompt")
    parser.add_argument("--snr", type=float, help="mix noise into the caller's speech at this SNR (dB)")
    parser.add_argument("--noise", choices=("babble", "white"), default="babble")
    parser.add_argument("--json", type=Path)
    args = parser.parse_args(argv)

    from agent import settings as settings_module
    from agent.models.manifest import load_manifest
    from agent.models.verify import resolve
    from agent.speech.asr import FULL_WINDOW, Transcriber

    env = dict(os.environ)
    env.setdefault("AGENT_MODELS_DIR", str(Path(env.get("AGENT_DATA_DIR", "var")) / "models"))
    settings = settings_module.parse([], env)
    model = resolve("asr", settings.asr_model, settings.asr_model_path, settings.models_path, load_manifest())
    transcriber = Transcriber(model, threads=settings.asr_threads,
                              **({"min_window": FULL_WINDOW} if args.full_window else {}))
    cases = load_cases(args.cases)
    rows = []
    with tempfile.TemporaryDirectory(prefix="eval-hearing-") as scratch:
        knowledge = build_knowledge(args.kb, Path(scratch), env)
        line = None
        if args.snr is not None:
            voices = babble_voices(cases, Path(scratch)) if args.noise == "babble" else ()
            line = Line(args.snr, args.noise, babble_voices=voices)
        for voice in args.voices.split(","):
            rows += evaluate(transcriber, knowledge, cases, voice, Path(scratch), hint=not args.no_hint, line=line)
    for row in rows:
        if not row["correct"] or row["question_wer"] > 0:
            mark = "ok " if row["correct"] else "BAD"
            print(f"{mark} {row['voice']} {row['id'][:26]:26} wer={row['question_wer']:.2f} "
                  f"lp={row['avg_logprob']:.2f} ev={row['evidence']:.2f} heard: {row['heard'][:60]!r} -> "
                  f"{row['answer'][:40]!r}")
    summary = {voice: summarize([r for r in rows if r["voice"] == voice]) for voice in args.voices.split(",")}
    summary["all"] = summarize(rows)
    print(json.dumps(summary, indent=2))
    if args.json:
        args.json.write_text(json.dumps({"summary": summary, "cases": rows}, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
