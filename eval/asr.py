"""Speech recognition on real human telephone speech: the Asterisk core prompts (8 kHz).

    python -m eval.asr [--models tiny.en,base] [--limit N] [--kb kb] [--path bridge|soxr] [--json OUT]

WER and CER after number/spelling normalisation, median decode time and real-time factor, with
and without the KB vocabulary hint. The prompts come from Debian's asterisk-core-sounds-en-wav
(transcripts in asterisk-core-sounds-en); when they are not installed they are fetched with
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
import statistics
import subprocess
import sys
import tempfile
import time
import wave
from pathlib import Path

import numpy as np

from eval.scoring import char_error_rate, normalize, word_error_rate

SYSTEM_SOUNDS = Path("/usr/share/asterisk/sounds/en_US_f_Allison")
SYSTEM_TEXTS = Path("/usr/share/doc/asterisk-core-sounds-en/core-sounds-en.txt.gz")
PACKAGES = ("asterisk-core-sounds-en-wav", "asterisk-core-sounds-en")


def parse_transcripts(text: str) -> dict[str, str]:
    """`name: text` lines; comments and bracketed non-speech entries ([beep]) are skipped."""
    out = {}
    for line in text.splitlines():
        name, sep, spoken = line.partition(":")
        spoken = spoken.strip()
        if not sep or line.startswith(";") or not spoken or spoken.startswith("["):
            continue
        out[name.strip()] = spoken
    return out


def locate(cache: Path) -> tuple[Path, Path]:
    """The prompts folder and transcripts file, fetching the Debian packages if needed."""
    if SYSTEM_SOUNDS.is_dir() and SYSTEM_TEXTS.is_file():
        return SYSTEM_SOUNDS, SYSTEM_TEXTS
    sounds = cache / SYSTEM_SOUNDS.relative_to("/")
    texts = cache / SYSTEM_TEXTS.relative_to("/")
    if not (sounds.is_dir() and texts.is_file()):
        cache.mkdir(parents=True, exist_ok=True)
        with tempfile.TemporaryDirectory() as scratch:
            subprocess.run(["apt-get", "download", *PACKAGES], cwd=scratch, check=True, capture_output=True)
            for deb in Path(scratch).glob("*.deb"):
                subprocess.run(["dpkg", "-x", str(deb), str(cache)], check=True)
    return sounds, texts


def load_8k(path: Path) -> np.ndarray:
    with wave.open(str(path)) as wav:
        if wav.getframerate() != 8000 or wav.getsampwidth() != 2:
            raise ValueError(f"{path}: expected 8 kHz 16-bit")
        return np.frombuffer(wav.readframes(wav.getnframes()), dtype="<i2").astype(np.int16)


def to_16k(pcm8: np.ndarray) -> np.ndarray:
    from agent.audio.pcm import StreamResampler, int16_to_float

    resampler = StreamResampler(8000, 16000)
    frames = [resampler.push(pcm8[i:i + 160]) for i in range(0, len(pcm8), 160)]
    return int16_to_float(np.concatenate(frames + [resampler.flush()]))


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


def evaluate(transcriber, items: list[tuple[str, str, np.ndarray]], hint: str) -> dict:
    refs, hyps, decode, rtf = [], [], [], []
    for _, reference, audio in items:
        started = time.perf_counter()
        text = transcriber.transcribe(audio, hint or None).text
        seconds = time.perf_counter() - started
        refs.append(reference)
        hyps.append(text)
        decode.append(seconds)
        rtf.append(seconds / (len(audio) / 16000))
    words = sum(len(normalize(r).split()) for r in refs)
    wer = sum(word_error_rate(r, h) * len(normalize(r).split()) for r, h in zip(refs, hyps, strict=True)) / words
    chars = sum(len(normalize(r)) for r in refs)
    cer = sum(char_error_rate(r, h) * len(normalize(r)) for r, h in zip(refs, hyps, strict=True)) / chars
    return {"n": len(items), "wer": round(wer, 4), "cer": round(cer, 4),
            "median_decode_ms": round(statistics.median(decode) * 1000, 1),
            "median_rtf": round(statistics.median(rtf), 3)}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m eval.asr", description=__doc__.splitlines()[0])
    parser.add_argument("--models", default="tiny.en", help="comma-separated: tiny.en, base, or manifest names")
    parser.add_argument("--limit", type=int, help="first N prompts (sorted by name)")
    parser.add_argument("--kb", type=Path, default=Path("kb"), help="KB whose vocabulary hint is also tried")
    parser.add_argument("--path", choices=("bridge", "soxr"), default="bridge",
                        help="8 → 16 kHz through pjsip's conference bridge (as live calls) or soxr")
    parser.add_argument("--json", type=Path)
    args = parser.parse_args(argv)

    from agent import settings as settings_module
    from agent.models.manifest import load_manifest
    from agent.models.verify import resolve
    from agent.speech.asr import Transcriber
    from eval.replay import kb_hint

    settings = settings_module.parse([], os.environ)
    sounds, texts = locate(settings.data_dir / "eval" / "asterisk")
    transcripts = parse_transcripts(gzip.decompress(texts.read_bytes()).decode("utf-8", "replace"))
    names = sorted(n for n in transcripts if (sounds / f"{n}.wav").is_file())[:args.limit]
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
        transcriber = Transcriber(model, threads=settings.model_threads)
        results[name] = {"plain": evaluate(transcriber, items, ""), "kb_hint": evaluate(transcriber, items, hint)}
        for mode, row in results[name].items():
            print(f"{name:18} {mode:8} n={row['n']:4} WER {row['wer']:.3f} CER {row['cer']:.3f} "
                  f"median decode {row['median_decode_ms']:.0f} ms RTF {row['median_rtf']:.3f}", flush=True)
    if args.json:
        args.json.write_text(json.dumps(results, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
