"""Does decoding queued utterances in one Whisper batch answer calls that end their turns together sooner?

    python -m eval.asr_batch [--model whisper-tiny.en] [--calls 2,4,8] [--repeats 8] [--cases eval/cases.jsonl]

N questions from the cases (flite voices, 8 kHz, resampled as on a call) reach the transcriber at the same
moment, as when N callers stop talking together; the time until the last transcript is back is what the
last of them waits. Compared, in one run and interleaved so the machine's noise hits each alike: Whisper
replicas decoding side by side without batching (AGENT_ASR_WORKERS), and batching (AGENT_ASR_BATCH) with
one or two replicas. Prints and writes (--json) the median and p90 per N and configuration.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import threading
import time
from pathlib import Path

import numpy as np

from eval.asr import to_16k
from eval.cases import load_cases
from eval.hearing import speak

CONFIGS = {"2 replicas": {"workers": 2, "max_batch": 1}, "2 replicas, batch": {"workers": 2, "max_batch": 8},
           "1 replica, batch": {"workers": 1, "max_batch": 8}}


def together(transcriber, utterances: list[np.ndarray]) -> tuple[float, list[int]]:
    """Seconds until every utterance, handed over at once, is transcribed; and their batch sizes."""
    results: list = [None] * len(utterances)

    def ask(i: int) -> None:
        results[i] = transcriber.transcribe(utterances[i])

    threads = [threading.Thread(target=ask, args=(i,)) for i in range(len(utterances))]
    started = time.perf_counter()
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    return time.perf_counter() - started, [r.batch for r in results]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--model", default="whisper-tiny.en")
    parser.add_argument("--calls", default="2,4,8")
    parser.add_argument("--repeats", type=int, default=8)
    parser.add_argument("--cases", type=Path, default=Path("eval/cases.jsonl"))
    parser.add_argument("--json", type=Path)
    args = parser.parse_args(argv)

    from agent import settings as settings_module
    from agent.models.load import resolve_all
    from agent.speech.asr import Transcriber

    settings = settings_module.parse([], {**os.environ, "AGENT_ASR_MODEL": args.model})
    model = resolve_all(settings)["asr"]
    counts = [int(n) for n in args.calls.split(",")]
    questions = [c.say for c in load_cases(args.cases) if c.say and c.audio is None][:max(counts)]
    with tempfile.TemporaryDirectory() as folder:
        utterances = [to_16k(speak(question, "slt", Path(folder))) for question in questions]
    transcribers = {name: Transcriber(model, threads=settings.asr_threads, **config)
                    for name, config in CONFIGS.items()}
    for transcriber in transcribers.values():
        together(transcriber, utterances[:2])  # first decodes warm the model up
    rows = []
    for n in counts:
        waits: dict[str, list[float]] = {name: [] for name in transcribers}
        batches: dict[str, list[int]] = {}
        for _ in range(args.repeats):
            for name, transcriber in transcribers.items():
                seconds, batches[name] = together(transcriber, utterances[:n])
                waits[name].append(seconds)
        for name, seconds in waits.items():
            rows.append({"calls": n, "config": name, "last_transcript_p50_ms": round(np.median(seconds) * 1000),
                         "last_transcript_p90_ms": round(float(np.percentile(seconds, 90)) * 1000),
                         "batch_sizes": batches[name]})
            print(json.dumps(rows[-1]), flush=True)
    if args.json:
        args.json.parent.mkdir(parents=True, exist_ok=True)
        args.json.write_text(json.dumps({"model": args.model, "threads": settings.asr_threads, "rows": rows},
                                        indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
