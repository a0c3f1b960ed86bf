"""Call-record writes on a thread of their own: in order, retried until they succeed, never in the way.

A record store can stall (SQLite locked by a backup or an admin's query, a slow disk): the calls
must not notice, and no turn may be lost or land out of order. So every write goes through one queue
and one thread; a write that fails is retried with a growing pause until it goes through, and the
writes behind it wait their turn. The queue is bounded, so a store that never comes back cannot eat
the memory: beyond the bound writes are spilled, in order, to a local file (and every later write behind
them), read back a batch at a time once the queue has drained, and the file is removed when it is empty. A
spill file left by an agent that stopped is written first when the next one starts. Without a spill file (or
for a write that cannot be spilled) the oldest pending write is dropped and counted instead.
"""

from __future__ import annotations

import logging
import pickle
import sqlite3
import threading
import time
from collections import deque
from collections.abc import Callable
from pathlib import Path

from agent.logs import event
from agent.threads import name_native

log = logging.getLogger(__name__)

MAX_PENDING = 20_000
RETRY_S = (0.2, 0.5, 1.0, 2.0)


class RecordWriter:
    """`submit(write, *args)` from any thread; the writes run in submission order on the writer thread."""

    def __init__(self, on_pending: Callable[[int], None] = lambda n: None,
                 on_degraded: Callable[[bool], None] = lambda degraded: None, spill: Path | None = None,
                 targets: dict[str, object] | None = None) -> None:
        """`on_degraded(True)` when a write starts being retried (the store is unavailable), `(False)` once it
        went through. `spill`: the overflow file; `targets`: the objects whose methods are written, by a name
        that stays the same across restarts (a spilled write is kept as target name, method name, arguments)."""
        self._queue: deque[tuple[Callable, tuple]] = deque()
        self._ready = threading.Condition()
        self._on_pending, self._on_degraded = on_pending, on_degraded
        self._spill_path, self._targets = spill, targets or {}
        self.spilled = 0
        """Writes in the spill file not yet read back."""
        self._spill_read = 0
        if spill is not None and spill.exists():
            self.spilled = self._count_spilled()
        self.dropped = 0
        self._busy = False
        self._thread = threading.Thread(target=self._run, name="records", daemon=True)
        self._thread.start()

    def submit(self, write: Callable, *args: object) -> None:
        with self._ready:
            if self.spilled or len(self._queue) >= MAX_PENDING:
                if self._spill(write, args):
                    self._ready.notify()
                    return
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
            while self._queue or self._busy or self.spilled:
                left = deadline - time.monotonic()
                if left <= 0:
                    return False
                self._ready.wait(min(left, 0.1))
        return True

    def _run(self) -> None:
        name_native()
        while True:
            with self._ready:
                while not self._queue:
                    if self.spilled:
                        self._read_back()
                    else:
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

    def _spill(self, write: Callable, args: tuple) -> bool:
        """Append one write to the spill file (under the lock); False when it cannot be."""
        target = next((name for name, obj in self._targets.items() if obj is getattr(write, "__self__", None)), None)
        if self._spill_path is None or target is None:
            return False
        try:
            with self._spill_path.open("ab") as out:
                pickle.dump((target, write.__name__, args), out)
        except OSError as exc:
            event(log, "records.spill_failed", logging.ERROR, error=type(exc).__name__)
            return False
        if self.spilled == 0:
            event(log, "records.spilling", logging.WARNING, pending=len(self._queue), file=str(self._spill_path))
        self.spilled += 1
        return True

    def _read_back(self) -> None:
        """Move the next batch of spilled writes into the queue (under the lock), in order."""
        batch = []
        try:
            with self._spill_path.open("rb") as spilled:
                spilled.seek(self._spill_read)
                while len(batch) < max(1, MAX_PENDING // 2):
                    try:
                        target, method, args = pickle.load(spilled)
                    except EOFError:
                        break
                    batch.append((getattr(self._targets[target], method), args))
                self._spill_read = spilled.tell()
        except FileNotFoundError:
            event(log, "records.spill_missing", logging.ERROR, lost=self.spilled)
            self.spilled, self._spill_read = 0, 0
            return
        except Exception as exc:  # a damaged file: kept aside, never in the way of the writes behind it
            aside = self._spill_path.with_name(f"{self._spill_path.name}.damaged-{int(time.time())}")
            self._spill_path.rename(aside)
            event(log, "records.spill_damaged", logging.ERROR, error=type(exc).__name__, kept_as=aside.name)
            self.spilled, self._spill_read = 0, 0
            return
        self._queue.extend(batch)
        self.spilled = max(0, self.spilled - len(batch)) if batch else 0
        if self.spilled == 0:
            self._spill_path.unlink(missing_ok=True)
            self._spill_read = 0
            event(log, "records.spill_read_back")

    def _count_spilled(self) -> int:
        count = 0
        try:
            with self._spill_path.open("rb") as spilled:
                while True:
                    pickle.load(spilled)
                    count += 1
        except EOFError:
            pass
        except Exception:  # a torn last entry (the agent stopped mid-write): what came before it is kept
            event(log, "records.spill_torn", logging.WARNING, entries=count)
        if count:
            event(log, "records.spill_found", entries=count, file=str(self._spill_path))
        return count

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
