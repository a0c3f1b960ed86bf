"""Hearing the question: the cases spoken down a telephone line, heard by the agent's Whisper, answered
by its KB — without SIP, so a change to hearing can be measured in a minute.

    python -m eval.hearing --kb kb --cases eval/cases.jsonl [--voices slt,rms,awb] [--full-window]
        [--snr DB [--noise babble|white]] [--hint kb|names|none] [--json OUT]

Each question is spoken by a flite voice at 8 kHz, sent through G.711 μ-law and back, resampled to
16 kHz with the agent's soxr resampler, transcribed by the agent's Transcriber with the KB's
vocabulary hint (every reading of its beam weighed against the KB), and answered, confirmed or asked
again as the agent's call core decides (one memory and core per call group, as on a call). The caller
behaves like a caller (eval.kit.repeats): asked to repeat, it says the question again a quarter slower; asked
to confirm a topic, it says yes or no as the person who asked would. Per case: every exchange, the first
listen's WER, the answer and whether it is right, a right refusal, or a wrong answer; in the summary
`accuracy` (right by the end), `first_try_accuracy`, `wrong_answers`, `asked_again` and `confirmations`.
With --snr, noise is mixed into the caller's 8 kHz speech before the line, as
eval.replay's --snr does (babble: four other callers saying other questions, see eval.kit.noise). The
end-to-end number on real calls is eval.replay's; this one isolates hearing from telephony.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import tempfile
from pathlib import Path

import numpy as np

from eval.kit.cases import Case, load_cases
from eval.kit.dialogue import Calls, ask, verdict
from eval.kit.knowledge import build_knowledge
from eval.kit.line import caller_audio, speak
from eval.kit.noise import Line, babble_talkers
from eval.kit.scoring import word_error_rate

VOICES = ("slt", "rms", "awb")


def babble_voices(cases: list[Case], folder: Path) -> tuple[np.ndarray, ...]:
    """The babble eval.replay mixes in (eval.kit.noise.babble_talkers), here at 8 kHz."""
    return tuple(speak(c.say, voice, folder) for c, voice in babble_talkers(cases))


HINTS = ("kb", "names", "none")


def whisper_hint(knowledge, hint: str) -> str | None:
    """The prompt the agent gives Whisper ("kb"), its names and codes alone ("names"), or none."""
    from agent.knowledge.vocabulary import prompt_hint, vocabulary

    if hint == "kb":
        return knowledge.vocabulary_hint()
    if hint == "names":
        return prompt_hint(vocabulary(". ".join(c.chunk.heading + (c.chunk.text,))
                                      for c in knowledge.index.snapshot.chunks))
    return None


def evaluate(transcriber, knowledge, cases: list[Case], voice: str, folder: Path, hint: str = "kb",
             line: Line | None = None, second=None) -> list[dict]:
    """Each case as on a call, decided by the agent's own call core (eval.kit.dialogue): heard by the agent's Whisper
    (every reading of the beam weighed against the KB; a doubtful turn heard again by `second`, the agent's second
    recogniser, when it has one), then answered, confirmed or asked again."""
    prompt = whisper_hint(knowledge, hint)

    def listener(recogniser):
        def listen(said: str, stretch: float):
            audio = caller_audio(said, voice, folder, stretch, line)
            return recogniser.transcribe(audio, prompt, hypotheses=recogniser.beam_size)
        return listen

    calls = Calls(knowledge)
    rows = []
    for case in cases:
        if case.say:
            exchanges, answer = ask(calls, case, listener(transcriber), listener(second) if second else None)
            rows.append(_row(case, voice, exchanges, answer))
    return rows


def _row(case: Case, voice: str, exchanges: list[dict], answer) -> dict:
    first = exchanges[0]
    return {"id": case.id, "voice": voice, "said": case.say, "heard": first["heard"], "exchanges": exchanges,
            **verdict(case, exchanges, answer),
            "other_reading": first["chosen"] != first["heard"] and bool(first["chosen"]),
            "heard_again": sum(bool(e["heard_again_from"]) for e in exchanges),
            "question_wer": round(word_error_rate(case.say, first["heard"]), 3),
            "avg_logprob": first["avg_logprob"], "evidence": first["evidence"],
            "asr_ms": first["asr_ms"]}


def _share(rows: list[dict], key: str) -> float:
    return round(sum(r[key] for r in rows) / max(1, len(rows)), 4)


def summarize(rows: list[dict]) -> dict:
    """`accuracy`: answered right by the end of the exchange (after the caller repeated or confirmed);
    `first_try_accuracy`: answered right at once; `wrong_answers`: answers whose content is wrong, and out-of-KB
    questions answered (declines and clarifications are not wrong answers)."""
    answerable = [r for r in rows if not r["out_of_kb"]]
    out_of_kb = [r for r in rows if r["out_of_kb"]]
    asr = [r["asr_ms"] for r in rows]
    return {"n": len(rows),
            "accuracy": _share(answerable, "correct"),
            "first_try_accuracy": _share(answerable, "first_try"),
            "abstain_accuracy": _share(out_of_kb, "correct"),
            "wrong_answers": sum(r["wrong_answer"] for r in rows),
            "asked_again": sum(r["asked_again"] for r in rows),
            "confirmations": sum(r["confirmations"] for r in rows),
            "other_reading_chosen": sum(r["other_reading"] for r in rows),
            "heard_again": sum(r["heard_again"] for r in rows),
            "question_wer": round(statistics.mean(r["question_wer"] for r in rows), 4) if rows else None,
            "heard_exactly": sum(r["question_wer"] == 0 for r in rows),
            "asr_p50_ms": round(float(np.percentile(asr, 50)), 1) if asr else None,
            "asr_p95_ms": round(float(np.percentile(asr, 95)), 1) if asr else None}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m eval.hearing", description=__doc__.splitlines()[0])
    parser.add_argument("--kb", type=Path, required=True)
    parser.add_argument("--cases", type=Path, required=True)
    parser.add_argument("--voices", default=",".join(VOICES))
    parser.add_argument("--full-window", action="store_true", help="decode in Whisper's 30 s window")
    parser.add_argument("--hint", choices=HINTS, default="kb", help="Whisper's prompt: the KB's names and distinctive "
                        "words (the agent's), its names and codes only (the hint before the words), or none")
    parser.add_argument("--snr", type=float, help="mix noise into the caller's speech at this SNR (dB)")
    parser.add_argument("--noise", choices=("babble", "white"), default="babble")
    parser.add_argument("--json", type=Path)
    args = parser.parse_args(argv)

    from agent import settings as settings_module
    from agent.models.load import hears_again
    from agent.models.manifest import load_manifest
    from agent.models.verify import resolve
    from agent.speech.asr import Transcriber
    from agent.speech.window import FULL_WINDOW

    env = dict(os.environ)
    env.setdefault("AGENT_MODELS_DIR", str(Path(env.get("AGENT_DATA_DIR", "var")) / "models"))
    settings = settings_module.parse([], env)
    def recogniser(name: str, path: Path | None) -> Transcriber:
        model = resolve("asr", name, path, settings.models_path, load_manifest())
        return Transcriber(model, threads=settings.asr_threads, beam_size=settings.asr_beam_size,
                           **({"min_window": FULL_WINDOW} if args.full_window else {}))

    transcriber = recogniser(settings.asr_model, settings.asr_model_path)
    second = recogniser(settings.asr_second_model, settings.asr_second_model_path) if hears_again(settings) else None
    cases = load_cases(args.cases)
    rows = []
    with tempfile.TemporaryDirectory(prefix="eval-hearing-") as scratch:
        knowledge = build_knowledge(args.kb, Path(scratch), env)
        line = None
        if args.snr is not None:
            voices = babble_voices(cases, Path(scratch)) if args.noise == "babble" else ()
            line = Line(args.snr, args.noise, babble_voices=voices)
        for voice in args.voices.split(","):
            rows += evaluate(transcriber, knowledge, cases, voice, Path(scratch), hint=args.hint, line=line,
                             second=second)
    for row in rows:
        if not row["first_try"] or row["question_wer"] > 0:
            mark = "ok " if row["correct"] else ("BAD" if row["wrong_answer"] else "-- ")
            steps = " / ".join(e["outcome"] for e in row["exchanges"])
            print(f"{mark} {row['voice']} {row['id'][:26]:26} wer={row['question_wer']:.2f} "
                  f"lp={row['avg_logprob']:.2f} ev={row['evidence'] or 0:.2f} heard: {row['heard'][:50]!r} "
                  f"[{steps}] -> {row['answer'][:40]!r}")
    summary = {voice: summarize([r for r in rows if r["voice"] == voice]) for voice in args.voices.split(",")}
    summary["all"] = summarize(rows)
    print(json.dumps(summary, indent=2))
    if args.json:
        args.json.write_text(json.dumps({"summary": summary, "cases": rows}, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
