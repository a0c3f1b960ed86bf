"""The listening-cost and load evals' arithmetic by thread, and their reading of a real process's threads."""

import os
import time
from collections import Counter
from pathlib import Path

from eval.kit.machine import per_turn_by_thread, thread_cpu
from eval.listening_cost import cost


def test_cost_is_cores_per_call_in_all_and_by_thread():
    before = {"clock": 1.0, "python": 2.0}
    after = {"clock": 3.0, "python": 6.0, "media": 0.4}  # a thread started meanwhile counts from zero
    result = cost(before, after, seconds=10.0, calls=2)
    assert result["cores"] == 0.64 and result["cores_per_call"] == 0.32
    assert result["by_thread"] == {"python": 0.2, "clock": 0.1, "media": 0.02}


def test_with_no_calls_the_cost_is_the_agent_doing_nothing():
    result = cost({"sip": 1.0}, {"sip": 1.5}, seconds=10.0, calls=0)
    assert result["cores"] == 0.05 and result["cores_per_call"] is None and result["by_thread"] == {"sip": 0.05}


def test_the_cpu_a_thread_spends_is_read_under_its_name():
    name = Path("/proc/self/comm").read_text().strip()  # the main thread's name is the process's
    before = thread_cpu(os.getpid())
    deadline = time.process_time() + 0.3
    while time.process_time() < deadline:
        pass
    after = thread_cpu(os.getpid())
    assert after[name] - before.get(name, 0.0) >= 0.2


def test_cpu_per_turn_by_thread_is_each_threads_share_largest_first_without_the_idle_ones():
    before = Counter({"model": 10.0, "listen": 1.0, "sip": 0.5})
    after = Counter({"model": 14.0, "listen": 2.0, "sip": 0.5, "records": 0.2})  # records started meanwhile
    assert per_turn_by_thread(before, after, turns=4) == {"model": 1.0, "listen": 0.25, "records": 0.05}
