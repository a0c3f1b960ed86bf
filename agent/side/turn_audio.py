"""The caller's turns as the agent heard them, kept as WAV files when AGENT_TURN_AUDIO_DIR is set (off by
default: it records callers). What the recogniser was given, with the call's record beside it, is how a
misheard turn is explained: the caller's own recording cannot show what the line, the jitter buffer or the
VAD's cut made of the words.

DIR/<call id>/<turn>.wav (16 kHz mono int16): the call's id as its record has it (/calls/{id}), the turn
numbered as the record lists them, from 1. Each file is written whole to a temporary name and renamed, on a
thread of its own, so a slow or full disk never holds up a call; a write that fails is logged and dropped. A
call's folder goes with its record, after AGENT_RECORDS_RETENTION_DAYS (`purge`).
"""

from __future__ import annotations

import logging
import os
import shutil
from concurrent.futures import Future, ThreadPoolExecutor
from pathlib import Path

import numpy as np

from agent.audio.pcm import float_to_int16
from agent.logs import event
from agent.side.messages import wav_bytes

log = logging.getLogger(__name__)


class TurnAudio:
    def __init__(self, folder: Path) -> None:
        self.folder = folder
        self._writer = ThreadPoolExecutor(1, thread_name_prefix="turn-audio")

    def keep(self, call_id: str, turn: int, audio: np.ndarray) -> None:
        """Queue the write of one turn's audio (float32 at 16 kHz, as the recogniser got it)."""
        future = self._writer.submit(self._write, self.folder / call_id / f"{turn:03d}.wav", float_to_int16(audio))
        future.add_done_callback(self._failed)

    @staticmethod
    def _write(path: Path, pcm: np.ndarray) -> None:
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_name(f".{path.name}.tmp")
        tmp.write_bytes(wav_bytes(pcm))
        os.replace(tmp, path)

    @staticmethod
    def _failed(future: Future) -> None:
        if (error := future.exception()) is not None:
            event(log, "turn_audio.write_failed", logging.WARNING, error=f"{type(error).__name__}: {error}")

    def close(self) -> None:
        """Finish the writes queued."""
        self._writer.shutdown(wait=True)


def purge(folder: Path, older_than: float) -> int:
    """Delete the calls' folders whose newest file is older than `older_than` (epoch seconds); returns how many.
    Blocking: run it off the loop."""
    gone = 0
    for call in folder.iterdir() if folder.is_dir() else ():
        newest = max((f.stat().st_mtime for f in call.iterdir()), default=0.0) if call.is_dir() else None
        if newest is not None and newest < older_than:
            shutil.rmtree(call, ignore_errors=True)
            gone += 1
    return gone
