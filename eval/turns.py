"""Can the turn model tell a finished question from a mid-question pause, on telephone speech?

    python -m eval.turns [--prompts 60] [--cases eval/cases.jsonl] [--json OUT]

Smart Turn v3.2 would let the agent answer after a short pause instead of the fixed hangover, but
only if it rarely calls an unfinished utterance complete (each such call cuts the caller off). Two
sets: real human telephone speech (Asterisk prompts of six words or more, cut after their middle
word using Whisper's word timestamps: the "paused" half, and the whole prompt) and the bundled cases
spoken by flite voices, cut the same way. Each clip ends 200 ms after its last word, as when the
agent would ask. Reports, per threshold, the share of whole utterances judged complete (latency
gained) and of cut ones judged complete (false cut-offs).
"""

from __future__ import annotations

import argparse
import gzip
import json
import random
import sys
import tempfile
from pathlib import Path

import numpy as np

THRESHOLDS = (0.5, 0.7, 0.9)
TAIL = 3200  # 200 ms of silence after the last word


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


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m eval.turns", description=__doc__.splitlines()[0])
    parser.add_argument("--prompts", type=int, default=60)
    parser.add_argument("--cases", type=Path, default=Path("eval/cases.jsonl"))
    parser.add_argument("--json", type=Path)
    args = parser.parse_args(argv)

    from faster_whisper import WhisperModel

    from agent import settings as settings_module
    from agent.models.manifest import load_manifest
    from agent.models.verify import resolve
    from agent.speech.turn import TurnModel
    from eval.asr import load_8k, locate, parse_transcripts, to_16k
    from eval.cases import load_cases
    from eval.hearing import speak, telephone

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
    with tempfile.TemporaryDirectory() as scratch:
        for case in load_cases(args.cases):
            if case.say and len(case.say.split()) >= 6:
                pair = cut_pairs(telephone(speak(case.say, "slt", Path(scratch))), whisper)
                if pair:
                    spoken.append(pair)
    result = {"human telephone prompts": judge(model, human), "flite cases": judge(model, spoken)}
    print(json.dumps(result, indent=2))
    if args.json:
        args.json.write_text(json.dumps(result, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
