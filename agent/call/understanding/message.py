"""Taking a message: the caller asking for it (or saying yes when offered), and when the recording ends.

Pure: on transcripts, and on 32 ms windows of audio with the VAD's verdict. The session plays the prompt
and the tone, feeds the caller's audio here until it says the message is over, and stores the result.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

import numpy as np

from agent.call.listening.turns import WINDOW_MS

OFFER_AFTER_DECLINES = 2
"""Declined questions in one call after which the agent offers to take a message."""

_ASKS = re.compile(r"\b(leave|take|record|pass on|give)\b(\s+\w+){0,3}\s+(a\s+)?messages?\b|\bvoice ?mail\b|"
                   r"\bmessage for\b")


def asks_for_message(transcript: str) -> bool:
    """"Can I leave a message?", "take a message please", "voicemail"."""
    return bool(_ASKS.search(transcript.lower()))


@dataclass(frozen=True)
class MessageConfig:
    max_s: float = 60.0
    """Longest message; the recording ends there."""
    silence_s: float = 3.0
    """Quiet after the caller has spoken that ends the message."""
    no_speech_s: float = 8.0
    """Quiet from the tone on, with nothing said, after which the agent stops waiting for a message."""
    tail_s: float = 0.5
    """Audio kept after the last voiced window (the end of the last word)."""
    lead_s: float = 0.3
    """Audio kept before the first voiced window (its first syllable), not the wait before it."""


class MessageRecording:
    """One message being recorded from 16 kHz int16 windows, until silence, the time limit or '#'."""

    def __init__(self, config: MessageConfig) -> None:
        self.config = config
        self._windows: list[np.ndarray] = []
        self._first_voiced = -1
        self._last_voiced = -1
        """Indices of the first and last voiced windows (-1: nothing said yet)."""

    @property
    def heard_speech(self) -> bool:
        return self._last_voiced >= 0

    @property
    def seconds(self) -> float:
        return len(self._windows) * WINDOW_MS / 1000

    def push(self, window: np.ndarray, voiced: bool) -> str | None:
        """Add one window; returns why the message is over ('silence', 'no speech', 'time limit'), or None."""
        self._windows.append(window)
        if voiced:
            self._last_voiced = len(self._windows) - 1
            if self._first_voiced < 0:
                self._first_voiced = self._last_voiced
        quiet_s = (len(self._windows) - 1 - self._last_voiced) * WINDOW_MS / 1000
        if self.heard_speech and quiet_s >= self.config.silence_s:
            return "silence"
        if not self.heard_speech and quiet_s >= self.config.no_speech_s:
            return "no speech"
        if self.seconds >= self.config.max_s:
            return "time limit"
        return None

    def audio(self) -> np.ndarray:
        """The message from just before the first word to just after the last (int16, 16 kHz)."""
        if not self.heard_speech:
            return np.zeros(0, dtype=np.int16)
        start = max(0, self._first_voiced - round(self.config.lead_s * 1000 / WINDOW_MS))
        end = self._last_voiced + 1 + round(self.config.tail_s * 1000 / WINDOW_MS)
        return np.concatenate(self._windows[start:end]).astype(np.int16)


@dataclass(frozen=True)
class Message:
    id: str
    call_id: str
    caller: str
    """The caller's SIP From (caller ID)."""
    dialed: str
    """The extension the caller dialled."""
    started: float
    """Epoch seconds when the recording began."""
    seconds: float
    ended_by: str
    """'silence', '#', 'time limit' or 'caller hung up'."""
    transcript: str | None = None
    """Whisper's reading of the message; None until transcribed."""
