"""Speech recognition on real human telephone speech: the Asterisk core prompts (8 kHz).

    python -m eval.asr_accuracy [--models tiny.en,base] [--windows short,full] [--limit N] [--kb kb]
        [--path bridge|soxr] [--json OUT] [--markdown TABLE.md]

A model × encoder-window table: WER and CER after number/spelling normalisation, with and without the
KB vocabulary hint; decode p50/p95 overall and by utterance length; real-time factor; CPU-seconds per
utterance; how often the short window fell back to the full one. The prompts come from Debian's
asterisk-core-sounds-en-wav (transcripts in asterisk-core-sounds-en); when they are not installed they are fetched with
`apt-get download` and unpacked under var/eval/asterisk. Audio reaches 16 kHz the way a live G.711
call's does: through pjsip's conference bridge into the agent's 16 kHz port (`--path bridge`, the
default; real time, about 15 minutes for 150 prompts, cached under var/eval/asterisk-bridge), or with
the agent's streaming soxr resampler (`--path soxr`, instant), to compare the two.
"""

from __future__ import annotations

import argparse
import gzip
import json
import os
import random
import statistics
import subprocess
import sys
import tempfile
import time
import wave
from pathlib import Path

import numpy as np

from eval.kit.line import to_16k
from eval.kit.scoring import char_error_rate, normalize, word_error_rate
from eval.kit.sounds import load_8k, locate, parse_transcripts


def through_bridge(paths: dict[str, Path], cache: Path) -> dict[str, np.ndarray]:
    """16 kHz float audio of each 8 kHz WAV after pjsip's conference bridge (eval.bridge_path in its own
    process: one pjsua2 Endpoint per process); already converted files are reused."""
    from agent.audio.pcm import int16_to_float

    flat = {name: name.replace("/", "__") + ".wav" for name in paths}  # digits/1 and 1 must not collide
    missing = [name for name in paths if not (cache / flat[name]).is_file()]
    if missing:
        print(f"resampling {len(missing)} prompts through the pjsip bridge (real time)...", flush=True)
        with tempfile.TemporaryDirectory() as links:
            for name in missing:
                (Path(links) / flat[name]).symlink_to(paths[name].resolve())
            result = subprocess.run([sys.executable, "-m", "eval.bridge_path",
                                     *(str(Path(links) / flat[n]) for n in missing), "--out", str(cache)],
                                    capture_output=True, text=True)
        if result.returncode != 0:
            raise RuntimeError(f"eval.bridge_path failed: {result.stderr.strip()[-1000:]}")
    out = {}
    for name in paths:
        with wave.open(str(cache / flat[name])) as wav:
            out[name] = int16_to_float(np.frombuffer(wav.readframes(wav.getnframes()), dtype="<i2"))
    return out


LENGTHS = ((0, 2), (2, 4), (4, 6), (6, 30))
"""Utterance-length buckets (seconds) for decode percentiles: the encoder window follows the length."""


def evaluate(transcriber, items: list[tuple[str, str, np.ndarray]], hint: str) -> dict:
    """WER/CER, decode percentiles overall and by utterance length, median RTF, CPU-seconds per utterance
    (every thread of this process), and how often the short window fell back to the full one."""
    refs, hyps, decode, cpu, lengths, fallbacks = [], [], [], [], [], 0
    for _, reference, audio in items:
        started, cpu_started = time.perf_counter(), time.process_time()
        transcript = transcriber.transcribe(audio, hint or None)
        decode.append(time.perf_counter() - started)
        cpu.append(time.process_time() - cpu_started)
        lengths.append(len(audio) / 16000)
        fallbacks += bool(transcript.fallback)
        refs.append(reference)
        hyps.append(transcript.text)
    words = sum(len(normalize(r).split()) for r in refs)
    wer = sum(word_error_rate(r, h) * len(normalize(r).split()) for r, h in zip(refs, hyps, strict=True)) / words
    chars = sum(len(normalize(r)) for r in refs)
    cer = sum(char_error_rate(r, h) * len(normalize(r)) for r, h in zip(refs, hyps, strict=True)) / chars
    by_length = {}
    for low, high in LENGTHS:
        times = [t for t, s in zip(decode, lengths, strict=True) if low <= s < high]
        if times:
            by_length[f"{low}-{high}s"] = {"n": len(times), "p50_ms": _ms(np.percentile(times, 50)),
                                           "p95_ms": _ms(np.percentile(times, 95))}
    return {"n": len(items), "wer": round(wer, 4), "cer": round(cer, 4),
            "p50_decode_ms": _ms(np.percentile(decode, 50)), "p95_decode_ms": _ms(np.percentile(decode, 95)),
            "median_rtf": round(statistics.median(t / s for t, s in zip(decode, lengths, strict=True)), 3),
            "cpu_s_per_utterance": round(statistics.mean(cpu), 3), "fallbacks": fallbacks,
            "by_length": by_length}


def _ms(seconds: float) -> float:
    return round(float(seconds) * 1000, 1)


def markdown_table(results: dict) -> str:
    """model × window rows: WER plain / with the KB hint, decode p50/p95, by-length p50/p95, RTF, CPU-s."""
    lines = ["| model | window | WER | WER, KB hint | decode p50 / p95 ms | p50 / p95 by length (s) | RTF | "
             "CPU-s | fallbacks |", "|---|---|---:|---:|---:|---|---:|---:|---:|"]
    for (model, window), row in results.items():
        plain, hinted = row["plain"], row["kb_hint"]
        lengths = ", ".join(f"{k}: {v['p50_ms']:.0f}/{v['p95_ms']:.0f}" for k, v in plain["by_length"].items())
        lines.append(f"| {model} | {window} | {plain['wer']:.1%} | {hinted['wer']:.1%} | "
                     f"{plain['p50_decode_ms']:.0f} / {plain['p95_decode_ms']:.0f} | {lengths} | "
                     f"{plain['median_rtf']:.3f} | {plain['cpu_s_per_utterance']:.2f} | {plain['fallbacks']} |")
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m eval.asr_accuracy", description=__doc__.splitlines()[0])
    parser.add_argument("--models", default="tiny.en", help="comma-separated: tiny.en, base, or manifest names")
    parser.add_argument("--limit", type=int, help="N prompts: the first by name, or a random sample with --seed")
    parser.add_argument("--seed", type=int, help="draw the --limit prompts at random with this seed")
    parser.add_argument("--kb", type=Path, default=Path("kb"), help="KB whose vocabulary hint is also tried")
    parser.add_argument("--path", choices=("bridge", "soxr"), default="bridge",
                        help="8 → 16 kHz through pjsip's conference bridge (as live calls) or soxr")
    parser.add_argument("--windows", default="short,full",
                        help="short: the agent's utterance-sized encoder window; full: Whisper's 30 s; a number: "
                             "the shortest window in mel frames (100 a second)")
    parser.add_argument("--json", type=Path)
    parser.add_argument("--markdown", type=Path, help="write the model × window table here")
    args = parser.parse_args(argv)

    from agent import settings as settings_module
    from agent.models.manifest import load_manifest
    from agent.models.verify import resolve
    from agent.speech.asr import Transcriber
    from agent.speech.window import FULL_WINDOW, MIN_WINDOW
    from eval.kit.placing import kb_hint

    settings = settings_module.parse([], os.environ)
    sounds, texts = locate(settings.data_dir / "eval" / "asterisk")
    transcripts = parse_transcripts(gzip.decompress(texts.read_bytes()).decode("utf-8", "replace"))
    names = sorted(n for n in transcripts if (sounds / f"{n}.wav").is_file())
    if args.seed is not None:
        random.Random(args.seed).shuffle(names)
    names = names[:args.limit]
    if args.path == "bridge":
        audio = through_bridge({n: sounds / f"{n}.wav" for n in names}, settings.data_dir / "eval" / "asterisk-bridge")
    else:
        audio = {n: to_16k(load_8k(sounds / f"{n}.wav")) for n in names}
    items = [(n, transcripts[n], audio[n]) for n in names]
    hint = kb_hint(args.kb) if args.kb.is_dir() else ""
    manifest = load_manifest()
    results = {}
    for short in args.models.split(","):
        name = short if short in manifest else f"whisper-{short}"
        model = resolve("asr", name, None, settings.models_path, manifest)
        for window in args.windows.split(","):
            frames = {"short": MIN_WINDOW, "full": FULL_WINDOW}.get(window) or int(window)
            transcriber = Transcriber(model, threads=settings.asr_threads, min_window=frames)
            row = results[(name, window)] = {"plain": evaluate(transcriber, items, ""),
                                             "kb_hint": evaluate(transcriber, items, hint)}
            for mode, r in row.items():
                print(f"{name:18} {window:5} {mode:8} n={r['n']:4} WER {r['wer']:.3f} CER {r['cer']:.3f} decode "
                      f"p50/p95 {r['p50_decode_ms']:.0f}/{r['p95_decode_ms']:.0f} ms RTF {r['median_rtf']:.3f} "
                      f"CPU {r['cpu_s_per_utterance']:.2f} s fallbacks {r['fallbacks']}", flush=True)
    print(markdown_table(results))
    if args.markdown:
        args.markdown.write_text(markdown_table(results))
    if args.json:
        args.json.write_text(json.dumps({f"{m}/{w}": row for (m, w), row in results.items()}, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
