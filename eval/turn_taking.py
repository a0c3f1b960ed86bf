"""When has the caller finished? The end-of-turn policies compared offline on telephone speech.

    python -m eval.turn_taking [--prompts 60] [--cases eval/cases.jsonl] [--kb kb] [--json OUT]

Two sets: real human telephone speech (Asterisk prompts of six words or more, cut after their middle
word using Whisper's word timestamps: the "paused" half, and the whole prompt) and the bundled cases
spoken by a flite voice down a G.711 line, cut the same way. Each clip ends 200 ms after its last word,
as when the agent decides. Three policies, on the same clips:
- the fixed hangover: every turn ends after 512 ms of silence;
- Smart Turn v3.2 (threshold 0.5): a turn the model calls complete ends after 224 ms, any other after 512;
- the agent's rule (agent/call/listening/endpointing.py): the speculative transcript (Whisper with the KB's hint and
  beam readings, weighed against `--kb` as on a call) judged complete ends after 224 ms, unfinished after
  1,216 ms, anything else after 512.
For whole utterances: the silence waited (the latency a policy adds). For cut ones, the share answered too
soon, i.e. cut off, when the caller's pause lasts 400, 600 or 800 ms. Also the model's shares of whole and
cut clips judged complete per threshold.
"""

from __future__ import annotations

import argparse
import gzip
import json
import os
import random
import sys
import tempfile
from pathlib import Path

import numpy as np

THRESHOLDS = (0.5, 0.7, 0.9)
TAIL = 3200  # 200 ms of silence after the last word
PAUSES_MS = (400, 600, 800)
SHORT_MS, DEFAULT_MS, LONG_MS = 224, 512, 1216


def cut_pairs(audio: np.ndarray, whisper) -> tuple[np.ndarray, np.ndarray] | None:
    """(whole, cut after the middle word) of 16 kHz audio, each ending 200 ms after its last word."""
    segments, _ = whisper.transcribe(audio, word_timestamps=True, without_timestamps=False)
    words = [w for s in segments for w in s.words]
    if len(words) < 6:
        return None
    tail = np.zeros(TAIL, np.float32)
    whole = np.concatenate([audio[:int(words[-1].end * 16000)], tail])
    cut = np.concatenate([audio[:int(words[len(words) // 2 - 1].end * 16000)], tail])
    return whole, cut


def judge(model, pairs: list[tuple[np.ndarray, np.ndarray]]) -> dict:
    whole = np.array([model.complete(w) for w, _ in pairs])
    cut = np.array([model.complete(c) for _, c in pairs])
    return {"n": len(pairs), **{f"{t}": {"whole_complete": round(float(np.mean(whole >= t)), 3),
                                        "cut_complete": round(float(np.mean(cut >= t)), 3)} for t in THRESHOLDS}}


def policy_outcome(whole_waits: list[int], cut_waits: list[int]) -> dict:
    """A policy's silence waited on whole utterances (mean, p95) and the share of cut ones it answers too soon
    for each caller pause in PAUSES_MS (answered when the pause reaches the silence it waits)."""
    return {"whole_wait_mean_ms": round(float(np.mean(whole_waits))),
            "whole_wait_p95_ms": round(float(np.percentile(whole_waits, 95))),
            **{f"cut_off_at_{p}ms": round(float(np.mean([p >= w for w in cut_waits])), 3) for p in PAUSES_MS}}


def compare(model, hear, pairs: list[tuple[np.ndarray, np.ndarray]]) -> dict:
    """The three policies on the same (whole, cut) clips; `hear(audio)` -> the rule's hangover in ms."""
    smart = [[SHORT_MS if model.complete(clip) >= 0.5 else DEFAULT_MS for clip in pair] for pair in pairs]
    rule = [[hear(clip) for clip in pair] for pair in pairs]
    return {"fixed hangover": policy_outcome([DEFAULT_MS] * len(pairs), [DEFAULT_MS] * len(pairs)),
            "smart turn 0.5": policy_outcome([w for w, _ in smart], [c for _, c in smart]),
            "the agent's rule": policy_outcome([w for w, _ in rule], [c for _, c in rule])}


def rule_hangover(transcriber, knowledge):
    """The agent's end-of-turn rule as on a call's first turn: its speculative transcript and understanding of
    the clip, judged (agent/call/endpointing.judge), as a hangover in ms."""
    from agent.call.listening.endpointing import Verdict
    from agent.call.listening.endpointing import judge as judge_turn
    from agent.call.understanding.understand import read, understand
    from agent.knowledge.memory import CallMemory

    waits = {Verdict.COMPLETE: SHORT_MS, Verdict.UNSURE: DEFAULT_MS, Verdict.UNFINISHED: LONG_MS}
    prompt = knowledge.vocabulary_hint()

    def hear(audio: np.ndarray) -> int:
        transcript = transcriber.transcribe(audio, prompt, hypotheses=transcriber.beam_size)
        if len(transcript.text.strip(" .?!,")) < 2:
            return DEFAULT_MS
        understanding = understand(transcript, read(knowledge, CallMemory(), transcript))
        return waits[judge_turn(transcript.text, understanding.firm)]

    return hear


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m eval.turn_taking", description=__doc__.splitlines()[0])
    parser.add_argument("--prompts", type=int, default=60)
    parser.add_argument("--cases", type=Path, default=Path("eval/cases.jsonl"))
    parser.add_argument("--kb", type=Path, default=Path("kb"), help="the KB the agent's rule weighs readings against")
    parser.add_argument("--json", type=Path)
    args = parser.parse_args(argv)

    from faster_whisper import WhisperModel

    from agent import settings as settings_module
    from agent.models.manifest import load_manifest
    from agent.models.verify import resolve
    from agent.speech.asr import Transcriber
    from eval.kit.cases import load_cases
    from eval.kit.knowledge import build_knowledge
    from eval.kit.line import speak, telephone, to_16k
    from eval.kit.smart_turn import TurnModel
    from eval.kit.sounds import load_8k, locate, parse_transcripts

    settings = settings_module.parse([], {})
    manifest = load_manifest()
    turn = resolve("turn", "smart-turn-v3.2", None, settings.models_path, manifest)
    model = TurnModel(str(turn.location), threads=2)
    asr = resolve("asr", "whisper-tiny.en", None, settings.models_path, manifest)
    whisper = WhisperModel(asr.location, device="cpu", compute_type="int8", cpu_threads=2)

    sounds, texts = locate(settings.data_dir / "eval" / "asterisk")
    transcripts = parse_transcripts(gzip.decompress(texts.read_bytes()).decode("utf-8", "replace"))
    names = [n for n in sorted(transcripts) if (sounds / f"{n}.wav").is_file() and
             6 <= len(transcripts[n].split()) <= 20]
    random.Random(3).shuffle(names)
    human = [p for n in names[:args.prompts] if (p := cut_pairs(to_16k(load_8k(sounds / f"{n}.wav")), whisper))]
    spoken = []
    transcriber = Transcriber(asr, threads=settings.asr_threads, beam_size=settings.asr_beam_size)
    with tempfile.TemporaryDirectory() as scratch:
        for case in load_cases(args.cases):
            if case.say and len(case.say.split()) >= 6:
                pair = cut_pairs(telephone(speak(case.say, "slt", Path(scratch))), whisper)
                if pair:
                    spoken.append(pair)
        env = {**os.environ, "AGENT_MODELS_DIR": str(settings.models_path.resolve())}
        hear = rule_hangover(transcriber, build_knowledge(args.kb, Path(scratch), env))
        result = {name: {"smart turn": judge(model, pairs), "policies": compare(model, hear, pairs)}
                  for name, pairs in (("human telephone prompts", human), ("flite cases", spoken))}
    print(json.dumps(result, indent=2))
    if args.json:
        args.json.write_text(json.dumps(result, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
