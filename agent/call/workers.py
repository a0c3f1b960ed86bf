"""The threads every model runs on, shared by all calls, with the caller who is waiting served first.

Three kinds of work share them: a turn the caller has finished (urgent: someone is listening to the
silence), a reply prepared during a pause that may be thrown away (speculative), and rendering answers or
embedding the KB ahead of need (background). One queue, ordered by that priority and then by arrival, so
no caller's answer waits behind another call's optional work; and speculative work is refused outright
(Busy) when no worker is free, so it never even queues in front of a turn that ends a moment later. Spare work
(a decode that may save a turn's wait, or may be thrown away) is refused unless a CPU core is doing nothing: it
must never slow what is needed. Each lane is a concurrent.futures.Executor, for loop.run_in_executor.
"""

from __future__ import annotations

import asyncio
import enum
import functools
import itertools
import os
import queue
import threading
from collections.abc import Callable
from concurrent.futures import Executor, Future
from typing import Any

from agent.heap import release_free_memory
from agent.threads import name_native


def off_loop(executor: Executor, function: Callable) -> Callable:
    """`function` as a coroutine function that runs it on `executor`."""
    async def call(*args):
        return await asyncio.get_running_loop().run_in_executor(executor, functools.partial(function, *args))
    return call


class Priority(enum.IntEnum):
    URGENT = 0
    SPECULATIVE = 1
    SPARE = 2
    BACKGROUND = 3


class Busy(RuntimeError):
    """Speculative or spare work refused: every worker (spare: every CPU core) was busy or had work waiting."""


class ModelWorkers:
    def __init__(self, threads: int, name: str = "model", cores: int | None = None) -> None:
        """`cores`: the CPU cores the process may run on (spare work takes one nobody uses); None: this machine's."""
        self._queue: queue.PriorityQueue = queue.PriorityQueue()
        self._order = itertools.count()
        self._lock = threading.Lock()
        self._idle = threads
        self._cores = cores or len(os.sched_getaffinity(0))
        self._closed = False
        self._threads = [threading.Thread(target=self._work, args=(name,), name=f"{name}_{i}",
                                         daemon=True) for i in range(threads)]
        for thread in self._threads:
            thread.start()

    def lane(self, priority: Priority) -> Lane:
        return Lane(self, priority)

    def submit(self, priority: Priority, fn: Callable[..., Any], *args: Any, **kwargs: Any) -> Future:
        future: Future = Future()
        with self._lock:
            if self._closed:
                raise RuntimeError("model workers are shut down")
            if priority is Priority.SPECULATIVE and (self._idle == 0 or not self._queue.empty()):
                future.set_exception(Busy("no model worker free for speculative work"))
                return future
            working = len(self._threads) - self._idle + self._queue.qsize()
            if priority is Priority.SPARE and (self._idle == 0 or working >= self._cores):
                future.set_exception(Busy("no CPU core free for spare work"))
                return future
            self._queue.put((priority, next(self._order), future, fn, args, kwargs))
        return future

    @property
    def waiting(self) -> int:
        return self._queue.qsize()

    @property
    def idle(self) -> int:
        return self._idle

    def shutdown(self, wait: bool = True, cancel_futures: bool = False) -> None:
        with self._lock:
            self._closed = True
        if cancel_futures:
            while True:
                try:
                    item = self._queue.get_nowait()
                except queue.Empty:
                    break
                item[2].cancel()
        for _ in self._threads:
            self._queue.put((Priority.BACKGROUND + 1, next(self._order), None, None, (), {}))
        if wait:
            for thread in self._threads:
                thread.join()

    def _work(self, name: str) -> None:
        name_native(name)  # one OS name for all: their CPU is read as one
        while True:
            _, _, future, fn, args, kwargs = self._queue.get()
            if future is None:
                return
            with self._lock:
                self._idle -= 1
            try:
                if future.set_running_or_notify_cancel():
                    try:
                        future.set_result(fn(*args, **kwargs))
                    except BaseException as exc:  # handed to whoever awaits the future
                        future.set_exception(exc)
            finally:
                with self._lock:
                    self._idle += 1
                    all_idle = self._idle == len(self._threads) and self._queue.empty()
                if all_idle:  # between turns: nobody waits while freed model buffers go back to the system
                    release_free_memory()


class Lane(Executor):
    """ModelWorkers seen as an Executor that submits at one priority."""

    def __init__(self, workers: ModelWorkers, priority: Priority) -> None:
        self.workers, self.priority = workers, priority

    def submit(self, fn: Callable[..., Any], /, *args: Any, **kwargs: Any) -> Future:
        return self.workers.submit(self.priority, fn, *args, **kwargs)

    def shutdown(self, wait: bool = True, *, cancel_futures: bool = False) -> None:
        self.workers.shutdown(wait, cancel_futures)
