"""Threads carry their names to the OS, so their CPU can be read apart (eval.listening_cost, eval.load)."""

import threading
from pathlib import Path

from agent.call.workers import ModelWorkers, Priority
from agent.threads import name_native, named


def os_name(native_id: int) -> str:
    return Path(f"/proc/self/task/{native_id}/comm").read_text().strip()


def test_a_thread_that_names_itself_is_seen_by_that_name():
    seen = {}

    def run():
        name_native("listen")
        seen["id"] = threading.get_native_id()
        seen["name"] = os_name(seen["id"])

    thread = threading.Thread(target=run)
    thread.start()
    thread.join()
    assert seen["name"] == "listen"


def test_a_name_longer_than_the_kernel_keeps_is_cut_not_refused():
    seen = {}

    def run():
        name_native("a-very-long-thread-name")
        seen["name"] = os_name(threading.get_native_id())

    thread = threading.Thread(target=run)
    thread.start()
    thread.join()
    assert seen["name"] == "a-very-long-thr"


def test_every_model_worker_is_seen_by_the_workers_name():
    workers = ModelWorkers(2, name="model")
    try:
        ids = {workers.submit(Priority.URGENT, threading.get_native_id).result(timeout=5) for _ in range(8)}
        assert ids and {os_name(i) for i in ids} == {"model"}
    finally:
        workers.shutdown()


def test_threads_started_under_a_name_keep_it_and_the_starter_gets_its_own_back():
    seen = {}
    before = os_name(threading.get_native_id())
    with named("asr"):
        started = threading.Thread(target=lambda: seen.update(name=os_name(threading.get_native_id())))
        started.start()
        started.join()
    assert seen["name"] == "asr" and os_name(threading.get_native_id()) == before
