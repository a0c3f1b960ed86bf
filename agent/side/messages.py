"""Messages callers left: a WAV and a JSON note per message under AGENT_DATA_DIR/messages (with
AGENT_DATABASE_URL, in the shared database instead: messages_pg.py).

Plain files, each written whole to a temporary name and renamed, so a crash or a full disk never leaves
half a message, and the audio is on disk before the (slower) transcript exists: a caller who hangs up
mid-message, or an agent stopped while it transcribes, still leaves the recording and who left it.
"""

from __future__ import annotations

import io
import json
import os
import re
import wave
from dataclasses import asdict
from pathlib import Path

import numpy as np

from agent.call.transport import RATE
from agent.call.understanding.message import Message

_ID = re.compile(r"^[0-9a-f]{16}$")


class MessageStore:
    """The messages folder; methods are blocking (run them on the record writer or a worker thread)."""

    def __init__(self, folder: Path, instance: str = "") -> None:
        self.folder, self.instance = folder, instance

    def save(self, message: Message, audio: np.ndarray) -> None:
        """The recording (16 kHz int16), then its note."""
        self.folder.mkdir(parents=True, exist_ok=True)
        wav_tmp = self.folder / f".{message.id}.wav.tmp"
        wav_tmp.write_bytes(wav_bytes(audio))
        os.replace(wav_tmp, self.folder / f"{message.id}.wav")
        self._write_note(message)

    def transcribed(self, message: Message, transcript: str) -> None:
        self._write_note(Message(**{**asdict(message), "transcript": transcript}))

    def _write_note(self, message: Message) -> None:
        tmp = self.folder / f".{message.id}.json.tmp"
        tmp.write_text(json.dumps(asdict(message)), encoding="utf-8")
        os.replace(tmp, self.folder / f"{message.id}.json")

    def recent(self, limit: int = 100, instance: str | None = None) -> list[dict]:
        """Newest first; a note that cannot be read is skipped (and its audio kept). The folder is one agent's:
        `instance` (a filter for shared stores) other than its own lists nothing."""
        if instance is not None and instance != self.instance:
            return []
        notes = []
        for path in self.folder.glob("*.json") if self.folder.is_dir() else ():
            if not _ID.match(path.stem):
                continue
            try:
                notes.append(json.loads(path.read_text(encoding="utf-8")))
            except (OSError, ValueError):
                continue
        notes.sort(key=lambda n: -float(n.get("started", 0)))
        return [{**n, "instance": self.instance, "audio": f"/messages/{n['id']}.wav"} for n in notes[:limit]]

    def purge(self, older_than: float) -> int:
        """Delete messages recorded before `older_than` (epoch seconds), note and audio; returns how many."""
        gone = 0
        for note in self.recent(limit=1 << 30):
            if float(note.get("started", 0)) < older_than:
                for suffix in (".wav", ".json"):
                    (self.folder / f"{note['id']}{suffix}").unlink(missing_ok=True)
                gone += 1
        return gone

    def audio(self, message_id: str) -> bytes | None:
        """The message's WAV file, or None (also for anything that is not a message id)."""
        if not _ID.match(message_id):
            return None
        path = self.folder / f"{message_id}.wav"
        try:
            return path.read_bytes()
        except OSError:
            return None


def wav_bytes(audio: np.ndarray) -> bytes:
    """16 kHz mono int16 samples as a WAV file."""
    out = io.BytesIO()
    with wave.open(out, "wb") as wav:
        wav.setnchannels(1)
        wav.setsampwidth(2)
        wav.setframerate(RATE)
        wav.writeframes(audio.astype("<i2").tobytes())
    return out.getvalue()
