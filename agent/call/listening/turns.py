"""Turn-taking: an explicit state machine over VAD probabilities, quiet → starting → speaking → stopping.

Pure: it is fed one (window, probability) pair per 512-sample VAD window and
returns events. Time is counted in windows, so the segmentation is the same
however the audio was chunked on its way here.
"""

from __future__ import annotations

import enum
from collections import deque
from dataclasses import dataclass

import numpy as np

WINDOW_MS = 32
"""One Silero window: 512 samples at 16 kHz."""
BLIP_GAP_MS = 160
"""A start this soon after a blip began with it: the caller's first short syllable, not a noise of its own."""
MURMUR = 0.2
"""Speech probability above which a window before a start is taken for the caller's soft beginning, not quiet."""
MURMUR_LEAD_MS = 1500
"""The most audio before a start that a soft beginning may add to the lead-in."""


class TurnState(enum.Enum):
    QUIET = "quiet"
    STARTING = "starting"
    SPEAKING = "speaking"
    STOPPING = "stopping"


@dataclass(frozen=True)
class SpeechStarted:
    """The caller has been speaking for the barge-in time (barge-in acts on this); the utterance
    itself only counts once the minimum speech time is reached."""

    window: int
    """Index of the window where speech began."""
    onset: int | None = None
    """Where the caller began talking, when that was earlier: a short first syllable ("if", "and") may fall
    below the barge-in time and end before the words after it start (see BLIP_GAP_MS)."""

    @property
    def began(self) -> int:
        return self.window if self.onset is None else self.onset


@dataclass(frozen=True)
class SpeechPaused:
    """The caller has been quiet for the pause time; the utterance ends here unless they resume within the hangover.
    Lets the caller's words be transcribed while the hangover runs (speculative endpointing)."""

    audio: np.ndarray
    """float32 16 kHz audio up to the last voiced window, as SpeechEnded will carry it."""
    window: int
    """Index of the last voiced window."""


@dataclass(frozen=True)
class SpeechResumed:
    """The caller went on talking after a pause within the turn (what was prepared for the pause is stale)."""

    window: int
    """Index of the window where speech came back."""
    silence_ms: int
    """How long the pause lasted."""


@dataclass(frozen=True)
class SpeechEnded:
    """The caller finished an utterance."""

    audio: np.ndarray
    """float32 16 kHz audio of the utterance, with a short lead-in."""
    window: int
    """Index of the last voiced window."""
    truncated: bool
    """Cut at the maximum utterance length rather than by silence."""
    silence_ms: int = 0
    """Quiet after the last voiced window before the end was declared (the hangover)."""


@dataclass(frozen=True)
class TurnConfig:
    threshold: float = 0.5
    min_speech_ms: int = 200
    hangover_ms: int = 500
    max_utterance_s: float = 15.0
    lead_in_ms: int = 320
    """Audio kept from before speech was detected, so the first syllable is not clipped; generous,
    because a caller talking over the agent is only heard once louder than its echo could be, and
    their first quieter syllables must still reach the recogniser."""
    barge_in_ms: int = 200
    """Speech that signals the caller is talking over the agent (at most min_speech_ms)."""
    pause_ms: int = 96
    """Quiet that makes a pause (SpeechPaused: a reply is prepared for it). Gaps between words are mostly
    shorter: at one window, a question cost a Whisper decode for every such gap, thrown away when the caller
    went on (eval.load: 2.4 decodes an answered turn)."""

    def windows(self, ms: float) -> int:
        return max(1, round(ms / WINDOW_MS))


Event = SpeechStarted | SpeechPaused | SpeechResumed | SpeechEnded


class TurnDetector:
    """Segments a stream of VAD windows into utterances."""

    def __init__(self, config: TurnConfig) -> None:
        self.config = config
        self.state = TurnState.QUIET
        self._index = -1
        self._recent: deque[tuple[int, np.ndarray, float]] = deque(
            maxlen=max(config.windows(MURMUR_LEAD_MS), config.windows(config.lead_in_ms)) + 1)
        """The last windows pushed, with their index and probability: a start's lead-in is taken from them."""
        self._recent_from = 0
        """The first window not yet given to the recogniser (after the last utterance, or after the blip that a held
        question ends with): a lead-in never reaches back before it."""
        self._utterance: list[np.ndarray] = []
        self._run = 0
        """Consecutive windows supporting the pending transition."""
        self._start = 0
        self._last_voiced = 0
        self._hangover = config.windows(config.hangover_ms)
        """Quiet windows that end the turn under way (see end_after)."""
        self._held: np.ndarray | None = None
        """A question's beginning put before a start that may yet prove a blip (see prepend)."""
        self._held_quiet = 0
        self._blip: tuple[int, int] | None = None
        """(first, last) window of the last start that proved a blip."""

    @property
    def pause(self) -> int | None:
        """The last voiced window of the pause under way, or None when the caller is not pausing."""
        return self._last_voiced if self.state is TurnState.STOPPING else None

    def prepend(self, audio: np.ndarray) -> None:
        """Put `audio` before the utterance under way: the caller is going on with a question they began before
        (its end and this one's audio are heard as one). A start is signalled before it counts as speech (the
        barge-in time is shorter), so until it does the question is also held: if the start proves a blip, the
        question is joined to the caller's next words, or ends on its own after the hangover's silence; it is
        never dropped (the agent has already taken its answer back)."""
        if self.state in (TurnState.STARTING, TurnState.SPEAKING):
            self._utterance.insert(0, audio.astype(np.float32))
            self._held = self._utterance[0] if self.state is TurnState.STARTING else None

    def end_after(self, ms: float) -> None:
        """End the pause under way once it has lasted `ms` (at the next window if it already has); the next turn
        starts with the configured hangover again."""
        if self.state is TurnState.STOPPING:
            self._hangover = self.config.windows(ms)

    def push(self, window: np.ndarray, probability: float) -> list[Event]:
        """Advance by one window; return the events it caused."""
        self._index += 1
        self._recent.append((self._index, window, probability))
        cfg = self.config
        voiced = probability >= cfg.threshold
        # Hysteresis: once speaking, a slightly lower probability still counts as speech.
        still_voiced = probability >= cfg.threshold - 0.15
        events: list[Event] = []
        if self.state is TurnState.QUIET:
            if voiced:
                self.state, self._run, self._start = TurnState.STARTING, 1, self._index
                if self._blip is not None and self._index - self._blip[1] > self.config.windows(BLIP_GAP_MS):
                    self._blip = None
                self._utterance = [*([self._held] if self._held is not None else []), *self._lead_in(), window]
            elif self._held is not None:
                self._held_quiet += 1
                if self._held_quiet >= self._hangover:
                    events.append(self._end_held())
        elif self.state is TurnState.STARTING:
            self._utterance.append(window)
            # The same hysteresis as while speaking: a quiet voice hovering around the threshold would
            # otherwise restart here at every dip and only be heard from its last few words.
            if still_voiced:
                self._run += 1
                if self._run == min(cfg.windows(cfg.barge_in_ms), cfg.windows(cfg.min_speech_ms)):
                    events.append(SpeechStarted(self._start, self._blip[0] if self._blip is not None else None))
                if self._run >= cfg.windows(cfg.min_speech_ms):
                    self.state, self._last_voiced, self._held, self._blip = TurnState.SPEAKING, self._index, None, None
            else:  # a blip: the next start may yet begin with it (SpeechStarted.onset)
                self._blip = (self._blip[0] if self._blip else self._start, self._index - 1)
                if self._held is not None:  # after a taken-back answer: keep all of it with the question
                    self._held, self._held_quiet = np.concatenate(self._utterance).astype(np.float32), 0
                    self._recent_from = self._index + 1  # what is held is not to be heard again in a lead-in
                self._reset()
        else:
            self._utterance.append(window)
            if still_voiced:
                if self.state is TurnState.STOPPING:
                    events.append(SpeechResumed(self._index, (self._index - self._last_voiced - 1) * WINDOW_MS))
                    self._hangover = cfg.windows(cfg.hangover_ms)
                self.state, self._last_voiced = TurnState.SPEAKING, self._index
            elif self.state is TurnState.SPEAKING:
                self.state = TurnState.STOPPING
            quiet = self._index - self._last_voiced
            if self.state is TurnState.STOPPING and quiet == cfg.windows(cfg.pause_ms):
                events.append(SpeechPaused(self._spoken(quiet), self._last_voiced))
            if self.state is TurnState.STOPPING and quiet >= self._hangover:
                events.append(self._end(truncated=False))
            elif len(self._utterance) >= cfg.windows(cfg.max_utterance_s * 1000):
                events.append(self._end(truncated=True))
        return events

    def _spoken(self, quiet: int) -> np.ndarray:
        """The utterance without its last `quiet` windows: what a pause and the end that follows it carry."""
        return np.concatenate(self._utterance[:len(self._utterance) - quiet]).astype(np.float32)

    def _lead_in(self) -> list[np.ndarray]:
        """The windows before a start that go with it (never from the last utterance): the configured lead-in,
        and before it those that still sounded like the caller (probability at or above MURMUR, back to the last
        quiet window). A soft voice hovering under the threshold makes its first words a run of blips, and the
        lead-in alone gave the recogniser "Milk your ass in my kitchen." for the question "I think I can smell
        gas in my kitchen." (flite over G.711, on a real call; the start came 0.9 s into it)."""
        before = [entry for entry in list(self._recent)[:-1] if entry[0] >= self._recent_from]
        first = max(0, len(before) - self.config.windows(self.config.lead_in_ms))
        while first > 0 and before[first - 1][2] >= MURMUR:
            first -= 1
        return [window for _, window, _ in before[first:]]

    def _end(self, truncated: bool) -> SpeechEnded:
        self._recent_from = self._index + 1
        quiet = self._index - self._last_voiced
        event = SpeechEnded(self._spoken(0 if truncated else quiet), self._last_voiced, truncated, quiet * WINDOW_MS)
        self._reset()
        return event

    def _end_held(self) -> SpeechEnded:
        """The held question, ended by the hangover's silence after the blip that followed it."""
        audio, self._held = self._held, None  # the windows since its blip are not in it: a lead-in may take them
        return SpeechEnded(audio, self._index - self._held_quiet, False, self._held_quiet * WINDOW_MS)

    def _reset(self) -> None:
        self.state = TurnState.QUIET
        self._hangover = self.config.windows(self.config.hangover_ms)
        self._run = 0
        self._utterance = []
