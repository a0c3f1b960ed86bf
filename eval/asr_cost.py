"""Where one decode of the agent's first listen spends its time, and what each of its choices costs.

    python -m eval.asr_cost [--voice rms] [--limit N] [--kb kb] [--json OUT]

The cases' questions are spoken by a flite voice down eval.hearing's μ-law line and decoded by one Transcriber
with the agent's threads, each question in every variant in turn (the order turning from one question to the
next, so the machine's own noise falls on each alike): as the agent decodes (its beam, all its readings, the
KB's hint as the prompt), without the hint, in a narrower beam, and greedy with and without the hint. Per
variant: decode p50 / p95, the encoder's part (mel features and encoder in the utterance-sized window, the same
whatever the decoder does, so no decoder setting takes it off) and the decoder's (the rest), and the mean
against the agent's. eval.hearing says what the variants cost in answers.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path

import numpy as np

from eval.kit.line import spoken_questions
from eval.kit.machine import cpu_name


def variants(beam: int) -> list[tuple[str, int, bool]]:
    """(name, beam width, with the KB's hint), the agent's own first."""
    named = [(f"agent: beam {beam}, {beam} readings, hint", beam, True), (f"beam {beam}, no hint", beam, False),
             ("beam 3, 3 readings, hint", 3, True), ("greedy, hint", 1, True), ("greedy, no hint", 1, False)]
    seen, unique = set(), []
    for name, width, hinted in named:  # an agent already at beam 3 or greedy needs no second row of itself
        if (width, hinted) not in seen:
            seen.add((width, hinted))
            unique.append((name, width, hinted))
    return unique


def decode_costs(transcriber, utterances: list[np.ndarray], prompt: str) -> list[dict]:
    """Per variant, milliseconds each utterance took in all and in the encoder."""
    plan = variants(transcriber.beam_size)
    times = {name: ([], []) for name, _, _ in plan}
    for i, audio in enumerate(utterances):
        for name, width, hinted in plan[i % len(plan):] + plan[:i % len(plan)]:
            heard = transcriber.transcribe(audio, prompt if hinted else None, beam_size=width, hypotheses=width)
            times[name][0].append(heard.decode_s * 1000)
            times[name][1].append(heard.encode_s * 1000)
    base = float(np.mean(times[plan[0][0]][0]))
    rows = []
    for name, width, hinted in plan:
        total, encoder = (np.array(t) for t in times[name])
        rows.append({"variant": name, "beam": width, "hint": hinted, "utterances": len(total),
                     "decode_p50_ms": round(float(np.percentile(total, 50)), 1),
                     "decode_p95_ms": round(float(np.percentile(total, 95)), 1),
                     "encoder_p50_ms": round(float(np.percentile(encoder, 50)), 1),
                     "decoder_p50_ms": round(float(np.percentile(total - encoder, 50)), 1),
                     "mean_vs_agent": round(float(np.mean(total)) / base, 3)})
    return rows


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m eval.asr_cost", description=__doc__.splitlines()[0])
    parser.add_argument("--cases", type=Path, default=Path("eval/cases.jsonl"))
    parser.add_argument("--voice", default="rms")
    parser.add_argument("--limit", type=int, help="only the first N questions")
    parser.add_argument("--kb", type=Path, default=Path("kb"), help="the KB whose hint is Whisper's prompt")
    parser.add_argument("--json", type=Path)
    args = parser.parse_args(argv)

    from agent import settings as settings_module
    from agent.models.load import resolve_all
    from agent.speech.asr import Transcriber
    from eval.kit.placing import kb_hint

    settings = settings_module.parse([], os.environ)
    model = resolve_all(settings)["asr"]
    utterances = spoken_questions(args.cases, args.voice, args.limit)
    transcriber = Transcriber(model, threads=settings.asr_threads, beam_size=settings.asr_beam_size)
    prompt = kb_hint(args.kb)
    decode_costs(transcriber, utterances[:2], prompt)  # the first decodes warm the model up
    rows = decode_costs(transcriber, utterances, prompt)
    for row in rows:
        print(json.dumps(row), flush=True)
    if args.json:
        args.json.parent.mkdir(parents=True, exist_ok=True)
        args.json.write_text(json.dumps({"model": model.name, "cpu": cpu_name(), "threads": settings.asr_threads,
                                         "rows": rows}, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
