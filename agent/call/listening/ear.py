"""The caller's side of turn-taking for one call: VAD windows in, turn events out.

Puts the turn detector and the end-of-turn policy together: a pause mid-question is learned, a caller who starts
again just after their turn ended is told apart from one reacting to the answer (a cut-off, not a barge-in), and
what the pause's prepared reply made of the words decides how long that pause may last. Pure: no I/O, no clock.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from agent.call.listening.endpointing import EndpointConfig, Endpointer, judge
from agent.call.listening.turns import (
    WINDOW_MS,
    Event,
    SpeechEnded,
    SpeechResumed,
    SpeechStarted,
    TurnConfig,
    TurnDetector,
    TurnState,
)
from agent.speech.vad import SAMPLE_RATE

JOIN_GAP_S = 0.2
"""Silence put between a question's first half and its rest when both are heard as one."""


@dataclass(frozen=True)
class Heard:
    event: Event
    cut_off: bool = False
    """The caller started again over the agent so soon after their turn that it is the rest of that question."""


class Ear:
    def __init__(self, turns: TurnConfig, endpointing: EndpointConfig | None = None) -> None:
        """`endpointing` None: every turn ends after `turns.hangover_ms` of silence, whatever was said."""
        self._turns = TurnDetector(turns)
        self._endpointer = Endpointer(endpointing or EndpointConfig(default_ms=turns.hangover_ms, enabled=False))
        self._turn_ended_window = -1_000_000
        self._last_utterance = np.zeros(0, np.float32)
        """The caller's last whole utterance (the first half of a question, when they turn out to go on)."""

    @property
    def threshold(self) -> float:
        return self._turns.config.threshold

    @property
    def quiet(self) -> bool:
        return self._turns.state is TurnState.QUIET

    @property
    def pauses_mid_question(self) -> int:
        return self._endpointer.pauses_mid_question

    @property
    def cut_offs(self) -> int:
        return self._endpointer.cut_offs

    def push(self, samples: np.ndarray, speech: float, *, agent_speaking: bool) -> list[Heard]:
        """One VAD window (its samples and speech probability) heard while the agent is or is not speaking."""
        heard = []
        for turn_event in self._turns.push(samples, speech):
            cut_off = False
            if isinstance(turn_event, SpeechResumed):
                self._endpointer.resumed(turn_event.silence_ms)
            elif isinstance(turn_event, SpeechEnded):
                self._turn_ended_window = turn_event.window + turn_event.silence_ms // WINDOW_MS
                self._last_utterance = turn_event.audio
            elif isinstance(turn_event, SpeechStarted) and agent_speaking:
                cut_off = self._endpointer.talked_over((turn_event.began - self._turn_ended_window) * WINDOW_MS)
            heard.append(Heard(turn_event, cut_off))
        return heard

    def understood(self, window: int, text: str, firm: bool, *, yes_or_no_asked: bool) -> None:
        """The reply prepared in the pause after `window` heard `text` (and the KB answers it firmly or not): that
        decides how much longer the pause may last. Too late once the caller went on or the turn ended."""
        if self._turns.pause == window:
            verdict = judge(text, firm, yes_or_no_asked=yes_or_no_asked)
            self._turns.end_after(self._endpointer.hangover_ms(verdict))

    def go_on_from_last(self) -> None:
        """The caller is going on with their last question: it is heard again together with what they say now."""
        gap = np.zeros(int(JOIN_GAP_S * SAMPLE_RATE), np.float32)
        self._turns.prepend(np.concatenate([self._last_utterance, gap]))

    def restart(self) -> None:
        """Turn-taking afresh (after a message was recorded); what was learned of the caller stays."""
        self._turns = TurnDetector(self._turns.config)
