"""How many threads should one Whisper decode use? Decode time by thread count, idle and beside a call.

    python -m eval.asr_threads [--threads 1,2] [--busy 0,20] [--voice rms] [--limit N] [--kb kb] [--json OUT]

The cases' questions are spoken by a flite voice down eval.hearing's μ-law line and decoded by one
Transcriber per thread count, as the agent decodes a turn (its beam width and readings, the KB's hint as the
prompt: a beam gives the threads more to share than a greedy decode), alternating which goes first so the
machine's own noise falls on each alike. With --busy P, another process keeps one core busy P% of every
20 ms tick, as a call's per-frame audio work does (eval.listening_cost measured about 11% of a core for one
listening call, more with several). Prints and writes (--json) decode p50 / p95 / mean per load and thread
count, and each one's mean against one thread's. The agent's setting is AGENT_ASR_THREADS.
"""

from __future__ import annotations

import argparse
import json
import multiprocessing
import os
import sys
import time
from pathlib import Path

import numpy as np

from eval.kit.line import spoken_questions
from eval.kit.machine import cpu_name

TICK_S = 0.02


def keep_busy(percent: float, stop) -> None:
    """Spin `percent`% of every 20 ms tick, sleep the rest, until `stop` is set."""
    busy = TICK_S * percent / 100
    while not stop.is_set():
        started = time.perf_counter()
        while time.perf_counter() - started < busy:
            pass
        time.sleep(max(0.0, TICK_S - busy))


def decode_times(transcribers: dict[int, object], utterances: list[np.ndarray], prompt: str = ""
                 ) -> dict[int, list[float]]:
    """Milliseconds each utterance took to decode, per thread count, the order alternating per utterance; each
    decode as the agent's first listen (the transcriber's beam, all its readings, `prompt`)."""
    times: dict[int, list[float]] = {n: [] for n in transcribers}
    order = list(transcribers)
    for i, audio in enumerate(utterances):
        for n in order if i % 2 == 0 else order[::-1]:
            heard = transcribers[n].transcribe(audio, prompt or None, hypotheses=transcribers[n].beam_size)
            times[n].append(heard.decode_s * 1000)
    return times


def measure(transcribers: dict[int, object], utterances: list[np.ndarray], busy: float, prompt: str = ""
            ) -> list[dict]:
    spawn = multiprocessing.get_context("spawn")
    stop, burner = spawn.Event(), None
    if busy > 0:
        burner = spawn.Process(target=keep_busy, args=(busy, stop), daemon=True)
        burner.start()
    try:
        times = decode_times(transcribers, utterances, prompt)
    finally:
        stop.set()
        if burner is not None:
            burner.join(5)
    base = float(np.mean(times[min(times)]))
    return [{"busy_pct": busy, "threads": n, "decode_p50_ms": round(float(np.percentile(t, 50)), 1),
             "decode_p95_ms": round(float(np.percentile(t, 95)), 1), "decode_mean_ms": round(float(np.mean(t)), 1),
             "mean_vs_fewest_threads": round(float(np.mean(t)) / base, 3), "utterances": len(t)}
            for n, t in times.items()]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m eval.asr_threads", description=__doc__.splitlines()[0])
    parser.add_argument("--threads", default="1,2", help="comma-separated thread counts to compare")
    parser.add_argument("--busy", default="0,20", help="comma-separated percentages of a core kept busy")
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
    transcribers = {int(n): Transcriber(model, threads=int(n), beam_size=settings.asr_beam_size)
                    for n in args.threads.split(",")}
    prompt = kb_hint(args.kb)
    decode_times(transcribers, utterances[:2], prompt)  # the first decodes warm each model up
    rows = []
    for busy in (float(p) for p in args.busy.split(",")):
        for row in measure(transcribers, utterances, busy, prompt):
            rows.append(row)
            print(json.dumps(row), flush=True)
    if args.json:
        args.json.parent.mkdir(parents=True, exist_ok=True)
        args.json.write_text(json.dumps({"model": model.name, "cpu": cpu_name(), "beam_size": settings.asr_beam_size,
                                         "rows": rows}, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
