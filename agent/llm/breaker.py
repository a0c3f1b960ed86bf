"""A circuit breaker: after `failures` failed answers in a row the server is left alone for `cool_off_s`, then
tried again with one call (a success closes it, a failure opens it for another cool-off)."""

from __future__ import annotations

import time
from collections.abc import Callable


class Breaker:
    def __init__(self, failures: int, cool_off_s: float, clock: Callable[[], float] = time.monotonic) -> None:
        self._limit, self._cool_off_s, self._clock = failures, cool_off_s, clock
        self._failed = 0
        self._open_until = 0.0

    @property
    def open(self) -> bool:
        """True while the server is left alone."""
        return self._clock() < self._open_until

    def success(self) -> None:
        self._failed, self._open_until = 0, 0.0

    def failure(self) -> None:
        self._failed += 1
        if self._failed >= self._limit:
            self._open_until = self._clock() + self._cool_off_s
            self._failed = self._limit - 1  # after the cool-off one more failure opens it again
