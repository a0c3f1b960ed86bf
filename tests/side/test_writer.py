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


class FlakyStore:
    """A store that is away until `back` is set; what it wrote, in order."""

    def __init__(self) -> None:
        self.back = threading.Event()
        self.done = []

    def add(self, n):
        if not self.back.is_set():
            raise OSError("connection refused")
        self.done.append(n)


def test_beyond_the_bound_writes_spill_to_a_file_and_all_land_in_order_once_the_store_is_back(monkeypatch,
                                                                                              tmp_path):
    monkeypatch.setattr(writer_module, "MAX_PENDING", 3)
    monkeypatch.setattr(writer_module, "RETRY_S", (0.01,))
    store, pending = FlakyStore(), []
    records = RecordWriter(pending.append, spill=tmp_path / "records.spill", targets={"records": store})
    for n in range(20):
        records.submit(store.add, n)
    assert records.spilled >= 16 and (tmp_path / "records.spill").exists() and max(pending) <= 3
    store.back.set()
    assert records.flush(10)
    assert store.done == list(range(20)) and records.dropped == 0
    assert not (tmp_path / "records.spill").exists()


def test_writes_an_agent_spilled_before_it_stopped_are_written_first_by_the_next(monkeypatch, tmp_path):
    monkeypatch.setattr(writer_module, "MAX_PENDING", 3)
    monkeypatch.setattr(writer_module, "RETRY_S", (0.01,))
    spill = tmp_path / "records.spill"
    gone = FlakyStore()
    before = RecordWriter(spill=spill, targets={"records": gone})
    for n in range(10):
        before.submit(gone.add, n)  # 0-2 wait in memory (lost with the process), 3-9 in the file
    after_store = FlakyStore()
    after_store.back.set()
    after = RecordWriter(spill=spill, targets={"records": after_store})
    after.submit(after_store.add, 10)
    assert after.flush(10) and after_store.done == list(range(3, 11))
