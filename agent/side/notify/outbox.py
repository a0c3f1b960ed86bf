"""The durable outbox: every event is on disk before anyone is told, and each channel's courier hands them on
one at a time, in order, retried with back-off until its channel takes it.

One SQLite file (AGENT_DATA_DIR/notifications.sqlite3), one row per event and channel, unique by the event's
key: an event put twice (an agent restarted mid-digest) is kept once. A courier takes its channel's oldest row,
delivers it, and only then deletes it; while its receiver is down it waits, the rows behind it waiting their
turn, and what an agent stopped meanwhile left behind goes out when the next one starts. An event the receiver
refuses for good (a 4xx other than 408 and 429) is given up, logged and counted, so one bad event cannot block
the channel for ever. Callers never wait: `put` only queues in memory; the courier's own thread writes the row.
"""

from __future__ import annotations

import json
import logging
import sqlite3
import threading
import time
from collections import deque
from collections.abc import Callable
from pathlib import Path

from agent.logs import event
from agent.side.notify.events import Event

log = logging.getLogger(__name__)

BACKOFF_S = (1.0, 2.0, 5.0, 10.0, 30.0)
"""Pauses between attempts at one event: short at first (a receiver restarting), then every 30 s."""


class Refused(Exception):
    """The receiver refused the event for good: retrying would get the same answer."""


Deliver = Callable[[Event], None]
"""Hand one event to a channel; raise Refused when it will never take it, any other exception to retry."""


def connect(path: Path) -> sqlite3.Connection:
    path.parent.mkdir(parents=True, exist_ok=True)
    db = sqlite3.connect(path, timeout=30)
    db.execute("PRAGMA journal_mode=WAL")
    db.execute("CREATE TABLE IF NOT EXISTS outbox (seq INTEGER PRIMARY KEY AUTOINCREMENT, channel TEXT NOT NULL, "
               "key TEXT NOT NULL, kind TEXT NOT NULL, body TEXT NOT NULL, attachment BLOB, "
               "attempts INTEGER NOT NULL DEFAULT 0, UNIQUE (channel, key))")
    return db


class Courier:
    """One channel's deliveries, on a thread of its own."""

    def __init__(self, channel: str, path: Path, deliver: Deliver,
                 on_result: Callable[[str, str], None] = lambda channel, result: None,
                 on_pending: Callable[[str, int], None] = lambda channel, n: None,
                 backoff_s: tuple[float, ...] = BACKOFF_S) -> None:
        """`on_result(channel, 'delivered' | 'retried' | 'refused')` after each attempt; `on_pending(channel, n)`
        as the rows waiting change."""
        self.channel, self._path, self._deliver = channel, path, deliver
        self._on_result, self._on_pending, self._backoff = on_result, on_pending, backoff_s
        self._incoming: deque[Event] = deque()
        self._wake = threading.Condition()
        self._stopping = False
        self.pending = 0
        self._thread = threading.Thread(target=self._run, name=f"notify-{channel}", daemon=True)
        self._thread.start()

    def put(self, notice: Event) -> None:
        with self._wake:
            self._incoming.append(notice)
            self._wake.notify()

    def stop(self, timeout: float = 5.0) -> None:
        """Stop after the attempt in progress; every event put so far is on disk by then."""
        with self._wake:
            self._stopping = True
            self._wake.notify()
        self._thread.join(timeout)

    def _run(self) -> None:
        failures = 0
        while not self._stopping:
            try:
                db = connect(self._path)
                try:
                    failures = self._deliver_all(db, failures)
                finally:
                    db.close()
            except sqlite3.Error as exc:  # a full or unwritable disk: what is queued waits in memory meanwhile
                event(log, "notify.outbox_failed", logging.ERROR, channel=self.channel, error=str(exc)[:200])
                with self._wake:
                    self._wake.wait(self._backoff[-1])

    def _deliver_all(self, db: sqlite3.Connection, failures: int) -> int:
        """Deliver the channel's events in order until stopped; `failures`: attempts failed in a row so far."""
        while True:
            self._store(db)
            if self._stopping:
                return failures
            row = db.execute("SELECT seq, key, kind, body, attachment, attempts FROM outbox WHERE channel = ? "
                             "ORDER BY seq LIMIT 1", (self.channel,)).fetchone()
            if row is None:
                self._wait(db, None)
                continue
            seq, key, kind, body, attachment, attempts = row
            result = self._attempt(Event(key, kind, json.loads(body), attachment), attempts)
            self._on_result(self.channel, result)
            if result == "retried":
                db.execute("UPDATE outbox SET attempts = attempts + 1 WHERE seq = ?", (seq,))
                db.commit()
                self._wait(db, self._backoff[min(failures, len(self._backoff) - 1)])
                failures += 1
                continue
            failures = 0
            db.execute("DELETE FROM outbox WHERE seq = ?", (seq,))
            db.commit()
            self._count(db)

    def _attempt(self, notice: Event, attempts: int) -> str:
        try:
            self._deliver(notice)
        except Refused as exc:
            event(log, "notify.refused", logging.ERROR, channel=self.channel, key=notice.key, error=str(exc))
            return "refused"
        except Exception as exc:  # the receiver is down or slow: the event waits its turn again
            if attempts == 0 or attempts % 10 == 0:
                event(log, "notify.retrying", logging.WARNING, channel=self.channel, key=notice.key,
                      attempts=attempts + 1, error=f"{type(exc).__name__}: {exc}"[:200])
            return "retried"
        event(log, "notify.delivered", channel=self.channel, key=notice.key, attempts=attempts + 1)
        return "delivered"

    def _wait(self, db: sqlite3.Connection, seconds: float | None) -> None:
        """Until something is put (None), or for `seconds`; whatever is put meanwhile is written down at once."""
        deadline = None if seconds is None else time.monotonic() + seconds
        while True:
            with self._wake:
                left = None if deadline is None else deadline - time.monotonic()
                if not self._incoming and not self._stopping and (left is None or left > 0):
                    self._wake.wait(left)
            self._store(db)
            if self._stopping or deadline is None or time.monotonic() >= deadline:
                return

    def _store(self, db: sqlite3.Connection) -> None:
        with self._wake:
            taken = list(self._incoming)
        if taken:
            db.executemany("INSERT OR IGNORE INTO outbox (channel, key, kind, body, attachment) VALUES (?, ?, ?, ?, ?)",
                           [(self.channel, e.key, e.kind, json.dumps(e.body), e.attachment) for e in taken])
            db.commit()
            with self._wake:  # only once they are on disk: a write that failed keeps them to try again
                for _ in taken:
                    self._incoming.popleft()
        self._count(db)

    def _count(self, db: sqlite3.Connection) -> None:
        self.pending = db.execute("SELECT COUNT(*) FROM outbox WHERE channel = ?", (self.channel,)).fetchone()[0]
        self._on_pending(self.channel, self.pending)
