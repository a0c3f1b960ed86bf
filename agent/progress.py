"""Progress of long jobs for people: a live bar on a terminal, one log event per tenth otherwise.

Used by `kb refresh` (embedding, rendering answer audio), `models fetch` (downloads) and the agent's
own start-up refresh; callable as progress(done, total).
"""

from __future__ import annotations

import logging
import sys
from typing import TextIO

from agent.logs import event

log = logging.getLogger(__name__)
BAR = 30


class Progress:
    """progress(done, total): `what` names the job ('embedding kb'), `unit` what is counted ('texts')."""

    def __init__(self, what: str, unit: str, stream: TextIO = sys.stderr) -> None:
        self._what, self._unit, self._stream = what, unit, stream
        self._live = stream.isatty()
        self._logged_tenth = -1

    def __call__(self, done: int, total: int) -> None:
        if self._live:
            filled = BAR * done // max(total, 1)
            self._stream.write(f"\r{self._what} [{'#' * filled}{'.' * (BAR - filled)}] {done}/{total} {self._unit}")
            if done >= total:
                self._stream.write("\n")
            self._stream.flush()
            return
        tenth = done * 10 // max(total, 1)
        if tenth != self._logged_tenth:
            self._logged_tenth = tenth
            event(log, "progress", job=self._what, done=done, total=total, unit=self._unit)
