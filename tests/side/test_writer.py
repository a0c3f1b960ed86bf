"""The record writer: writes in order, retried through a locked store, bounded, never blocking a call."""

import sqlite3
import threading
import time

from agent.side import writer as writer_module
from agent.side.writer import RecordWriter


def test_writes_run_in_order_and_a_locked_store_is_retried_until_it_opens(monkeypatch):
    monkeypatch.setattr(writer_module, "RETRY_S", (0.01,))
    unlocked = threading.Event()
    done = []

    def write(n):
        if n == 2 and not unlocked.is_set():
            raise sqlite3.OperationalError("database is locked")
        done.append(n)

    records = RecordWriter()
    started = time.monotonic()
    for n in range(1, 5):
        records.submit(write, n)
    assert time.monotonic() - started < 0.05  # submitting never waits for the store
    assert not records.flush(0.2) and done == [1]  # 2 is retried, 3 and 4 wait behind it
    unlocked.set()
    assert records.flush(2) and done == [1, 2, 3, 4]


def test_a_write_the_store_rejects_for_another_reason_is_skipped_not_retried_forever():
    done = []

    def write(n):
        if n == 1:
            raise ValueError("a bug")
        done.append(n)

    records = RecordWriter()
    records.submit(write, 1)
    records.submit(write, 2)
    assert records.flush(2) and done == [2]


def test_a_store_that_never_comes_back_costs_bounded_memory(monkeypatch):
    monkeypatch.setattr(writer_module, "MAX_PENDING", 3)
    monkeypatch.setattr(writer_module, "RETRY_S", (0.01,))
    pending = []

    def never(n):
        raise sqlite3.OperationalError("disk I/O error")

    records = RecordWriter(pending.append)
    for n in range(10):
        records.submit(never, n)
    assert records.dropped >= 6 and max(pending) <= 3
