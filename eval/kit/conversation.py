"""When a scripted caller speaks: a pure, tick-based turn-taking policy for eval callers.

Fed one tick (20 ms) at a time with whether the agent's audio was voiced on
that tick. A normal question waits until the agent has answered the previous
one and gone quiet; a barge-in question starts `barge_in_at_ms` into that
answer. After the last question the conversation is done once its answer has
ended (or never came). An answer that has begun is waited out however late it
began, as a person would listen to a slow agent (on a loaded machine one took 8 s
to start); only an answer that never begins, or one that never ends (hold music),
moves the caller on. A caller that reacts (`react`) is asked, each time an
answer has ended, whether it has something to say to it first (the question
again, a yes or a no): that step is put in before the next question.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

TICK_MS = 20


@dataclass(frozen=True)
class Step:
    ticks: int
    """Length of the question audio in ticks."""
    barge_in_at_ms: int | None = None


class Conversation:
    def __init__(self, steps: list[Step], quiet_ms: int = 1000, answer_timeout_ms: int = 12000,
                 react: Callable[[int], Step | None] | None = None, longest_wait_ms: int = 45000) -> None:
        """`answer_timeout_ms`: how long after a step the caller waits for an answer to begin; `longest_wait_ms`:
        how long after it the caller waits for a begun answer to end. `react(n)`: called once the answer to step n
        is over; a Step it returns is said next."""
        self.steps = steps
        self._react = react
        self.quiet = quiet_ms // TICK_MS
        self.timeout = answer_timeout_ms // TICK_MS
        self.longest = max(longest_wait_ms, answer_timeout_ms) // TICK_MS
        self.started: list[int] = []
        """Tick at which each step started."""
        self._since_end = 0
        self._heard = False
        self._quiet_run = 0
        self._first_answer_tick: int | None = None
        self.done = False

    def _previous_end(self) -> int | None:
        return self.started[-1] + self.steps[len(self.started) - 1].ticks if self.started else None

    def on_tick(self, tick: int, agent_voiced: bool) -> int | None:
        """Advance one tick; return the index of a step to start now, or None."""
        if self.done:
            return None
        end = self._previous_end()
        if end is not None and tick < end:
            return None  # the caller is still talking
        self._since_end += 1
        if agent_voiced:
            self._heard, self._quiet_run = True, 0
            if self._first_answer_tick is None:
                self._first_answer_tick = tick
        else:
            self._quiet_run += 1
        answered = self._heard and self._quiet_run >= self.quiet
        timed_out = self._since_end >= (self.longest if self._heard else self.timeout)
        if (answered or timed_out) and self._react is not None and self.started:
            reply = self._react(len(self.started) - 1)
            if reply is not None:
                self.steps.insert(len(self.started), reply)
        if len(self.started) == len(self.steps):
            self.done = answered or timed_out
            return None
        step = self.steps[len(self.started)]
        barge = step.barge_in_at_ms is not None and self._first_answer_tick is not None and \
            tick >= self._first_answer_tick + step.barge_in_at_ms // TICK_MS
        if barge or answered or timed_out:
            self.started.append(tick + 1)
            self._since_end, self._heard, self._quiet_run, self._first_answer_tick = 0, False, 0, None
            return len(self.started) - 1
        return None
