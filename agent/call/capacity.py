"""How many more calls fit on this machine, from what calls cost here rather than from a guess.

Fed every second with the process's CPU time and the number of calls up, it learns what the agent costs
with no call (the idle rate) and what each call adds on average (listening, VAD, the bridge, and its share
of transcribing and speaking), both smoothed over half a minute. A new call fits while the calls up plus
one more stay within `cpu_target` of the cores: beyond that, turns that end together queue for the cores
and every caller's answer comes later (eval.load shows where). Until a call has been measured it refuses
nothing; `max_calls` holds regardless. Pure: the agent feeds it, tests feed it numbers.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class CapacityConfig:
    cores: int
    cpu_target: float
    """Share of all cores the calls may use on average; 0: no limit but max_calls."""
    max_calls: int
    smoothing_s: float = 30.0


class Capacity:
    def __init__(self, config: CapacityConfig) -> None:
        self.config = config
        self.idle_rate = 0.0
        """CPU-seconds per second with no call up."""
        self.per_call: float | None = None
        """CPU-seconds per second each call adds, once measured."""
        self._last: tuple[float, float] | None = None
        self._active = 0

    def observe(self, now: float, cpu_s: float, active_calls: int) -> None:
        """The process's total CPU time at `now` (monotonic seconds) and the calls up since the last one."""
        if self._last is not None and now > self._last[0]:
            elapsed = now - self._last[0]
            rate = (cpu_s - self._last[1]) / elapsed
            weight = min(1.0, elapsed / self.config.smoothing_s)
            if active_calls == self._active == 0:
                self.idle_rate += weight * (rate - self.idle_rate)
            elif active_calls == self._active:  # a whole interval with the same calls up
                sample = max(0.0, rate - self.idle_rate) / active_calls
                self.per_call = sample if self.per_call is None else self.per_call + weight * (sample - self.per_call)
        self._last, self._active = (now, cpu_s), active_calls

    def spare(self, active_calls: int) -> int:
        """How many more calls may be admitted with `active_calls` up."""
        room = self.config.max_calls - active_calls
        if self.per_call is None or self.per_call <= 0 or self.config.cpu_target <= 0:
            return max(0, room)
        budget = self.config.cores * self.config.cpu_target - self.idle_rate
        # One call always fits: an agent refusing every call would never measure a cheaper one.
        fit = max(1, int(budget / self.per_call))
        return max(0, min(room, fit - active_calls))
