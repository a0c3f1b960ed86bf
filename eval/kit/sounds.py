"""Real human telephone speech: the Asterisk core prompts (8 kHz) and their transcripts, from Debian's
asterisk-core-sounds-en-wav and asterisk-core-sounds-en (fetched with `apt-get download` when not installed)."""

from __future__ import annotations

import subprocess
import tempfile
import wave
from pathlib import Path

import numpy as np

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
