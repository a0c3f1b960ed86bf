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
