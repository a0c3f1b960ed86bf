"""Refresh progress for people: a live counter on a terminal, a few log events otherwise."""

from __future__ import annotations

import logging
import sys
from typing import TextIO

from agent.logs import event

log = logging.getLogger(__name__)


class RefreshProgress:
    """Callable as progress(done, total) during a KB refresh."""

    def __init__(self, stream: TextIO = sys.stderr) -> None:
        self._stream = stream
        self._live = stream.isatty()
        self._logged_tenth = -1

    def __call__(self, done: int, total: int) -> None:
        if self._live:
            self._stream.write(f"\rindexing kb: embedded {done}/{total} texts")
            if done >= total:
                self._stream.write("\n")
            self._stream.flush()
            return
        tenth = done * 10 // max(total, 1)
        if tenth != self._logged_tenth:
            self._logged_tenth = tenth
            event(log, "kb.progress", embedded=done, total=total)
