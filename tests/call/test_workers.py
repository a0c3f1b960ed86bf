"""The shared model workers: a finished turn first, optional work never in its way."""

import asyncio
import threading

import pytest

from agent.call.workers import Busy, ModelWorkers, Priority


def blocked_workers(threads: int = 1):
    workers, release = ModelWorkers(threads), threading.Event()
    started = [workers.submit(Priority.URGENT, release.wait) for _ in range(threads)]
    while workers.idle:  # every worker is running its blocking job
        pass
    return workers, release, started


def test_a_finished_turn_runs_before_background_work_queued_earlier():
    workers, release, _ = blocked_workers()
    order = []
    background = workers.submit(Priority.BACKGROUND, order.append, "render")
    urgent = workers.submit(Priority.URGENT, order.append, "turn")
    release.set()
    background.result(5), urgent.result(5)
    assert order == ["turn", "render"]
    workers.shutdown()


def test_speculative_work_is_refused_when_no_worker_is_free_and_runs_when_one_is():
    workers, release, started = blocked_workers()
    with pytest.raises(Busy):
        workers.submit(Priority.SPECULATIVE, lambda: "early").result(0)
    release.set()
    started[0].result(5)
    while not workers.idle:
        pass
    assert workers.submit(Priority.SPECULATIVE, lambda: "spare").result(5) == "spare"
    workers.shutdown()


def test_spare_work_is_refused_while_every_core_has_work_though_a_worker_is_free():
    """Four workers on two cores: with two jobs running, a spare decode would only slow them."""
    release = threading.Event()
    workers = ModelWorkers(4, cores=2)
    running = [workers.submit(Priority.URGENT, release.wait) for _ in range(2)]
    while workers.idle > 2:
        pass
    with pytest.raises(Busy):
        workers.submit(Priority.SPARE, lambda: "spare").result(0)
    release.set()
    for job in running:
        job.result(5)
    workers.shutdown()


def test_spare_work_runs_beside_one_job_when_a_core_is_free():
    release = threading.Event()
    workers = ModelWorkers(4, cores=2)
    running = workers.submit(Priority.URGENT, release.wait)
    assert workers.submit(Priority.SPARE, lambda: "spare").result(5) == "spare"
    release.set()
    running.result(5)
    workers.shutdown()


def test_a_lane_is_an_executor_for_the_event_loop_and_errors_reach_the_awaiting_caller():
    workers = ModelWorkers(2)

    async def run():
        loop = asyncio.get_running_loop()
        assert await loop.run_in_executor(workers.lane(Priority.URGENT), sum, [1, 2, 3]) == 6
        with pytest.raises(ZeroDivisionError):
            await loop.run_in_executor(workers.lane(Priority.BACKGROUND), lambda: 1 / 0)

    asyncio.run(run())
    workers.shutdown()


def test_shutdown_cancels_what_was_still_waiting():
    workers, release, _ = blocked_workers()
    waiting = workers.submit(Priority.BACKGROUND, lambda: "never")
    workers.shutdown(wait=False, cancel_futures=True)
    release.set()
    assert waiting.cancelled()


def resident_mib() -> float:
    import os

    return int(open("/proc/self/statm").read().split()[1]) * os.sysconf("SC_PAGE_SIZE") / 2**20


def test_memory_a_model_job_frees_goes_back_to_the_system_once_the_workers_are_idle():
    def fragmenting_job() -> list[bytearray]:
        """200 MiB in pieces below malloc's mmap threshold, every other one freed: holes the heap cannot shrink
        past by itself."""
        pieces = [bytearray(100 * 1024) for _ in range(2048)]
        return pieces[::2]

    workers = ModelWorkers(1)
    before = resident_mib()
    kept = workers.submit(Priority.URGENT, fragmenting_job).result(30)
    workers.submit(Priority.URGENT, int).result(30)  # one worker: the first job's clean-up is over by now
    grown = resident_mib() - before
    workers.shutdown()
    assert len(kept) == 1024 and grown < 150, f"{grown:.0f} MiB still resident for the 100 MiB kept"
