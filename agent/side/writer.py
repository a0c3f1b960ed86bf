"""Call-record writes on a thread of their own: in order, retried until they succeed, never in the way.

A record store can stall (SQLite locked by a backup or an admin's query, a slow disk): the calls
must not notice, and no turn may be lost or land out of order. So every write goes through one queue
and one thread; a write that fails is retried with a growing pause until it goes through, and the
writes behind it wait their turn. The queue is bounded, so a store that never comes back cannot eat
the memory: beyond the bound the oldest pending write is dropped and counted.
"""

from __future__ import annotations

import logging
import sqlite3
import threading
import time
from collections import deque
from collections.abc import Callable

from agent.logs import event

log = logging.getLogger(__name__)

MAX_PENDING = 20_000
RETRY_S = (0.2, 0.5, 1.0, 2.0)


class RecordWriter:
    """`submit(write, *args)` from any thread; the writes run in submission order on the writer thread."""

    def __init__(self, on_pending: Callable[[int], None] = lambda n: None,
                 on_degraded: Callable[[bool], None] = lambda degraded: None) -> None:
        """`on_degraded(True)` when a write starts being retried (the store is unavailable), `(False)` once it
        went through."""
        self._queue: deque[tuple[Callable, tuple]] = deque()
        self._ready = threading.Condition()
        self._on_pending, self._on_degraded = on_pending, on_degraded
        self.dropped = 0
        self._busy = False
        self._thread = threading.Thread(target=self._run, name="records", daemon=True)
        self._thread.start()

    def submit(self, write: Callable, *args: object) -> None:
        with self._ready:
            if len(self._queue) >= MAX_PENDING:
                self._queue.popleft()
                self.dropped += 1
                event(log, "records.write_dropped", logging.ERROR, dropped=self.dropped)
            self._queue.append((write, args))
            self._on_pending(len(self._queue))
            self._ready.notify()

    def flush(self, timeout: float) -> bool:
        """Wait until every submitted write is done (True) or `timeout` passes (False)."""
        deadline = time.monotonic() + timeout
        with self._ready:
            while self._queue or self._busy:
                left = deadline - time.monotonic()
                if left <= 0:
                    return False
                self._ready.wait(min(left, 0.1))
        return True

    def _run(self) -> None:
        while True:
            with self._ready:
                while not self._queue:
                    self._ready.wait()
                item = self._queue[0]
                self._busy = True
            self._write_until_done(*item)
            with self._ready:
                if self._queue and self._queue[0] is item:  # not already dropped by an overflowing submit
                    self._queue.popleft()
                self._busy = False
                self._on_pending(len(self._queue))
                self._ready.notify_all()

    def _write_until_done(self, write: Callable, args: tuple) -> None:
        """Retry while the store is unavailable (locked, I/O); a write the store rejects for any other
        reason is a bug, logged and skipped rather than holding up every write behind it."""
        attempt = 0
        while True:
            try:
                write(*args)
                if attempt:
                    event(log, "records.write_recovered", attempts=attempt + 1)
                    self._on_degraded(False)
                return
            except (sqlite3.OperationalError, OSError) as exc:
                if attempt == 0:
                    event(log, "records.write_retrying", logging.WARNING, error=type(exc).__name__,
                          detail=str(exc)[:120])
                    self._on_degraded(True)
                time.sleep(RETRY_S[min(attempt, len(RETRY_S) - 1)])
                attempt += 1
            except Exception:
                log.exception("records.write_failed")
                return
