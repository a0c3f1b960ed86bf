"""Capacity from measured cost, on exact numbers."""

from agent.call.capacity import Capacity, CapacityConfig


def fed(capacity: Capacity, seconds: int, rate: float, calls: int, start: float = 0.0, cpu: float = 0.0):
    for t in range(1, seconds + 1):
        capacity.observe(start + t, cpu + rate * t, calls)
    return start + seconds, cpu + rate * seconds


def test_before_any_call_is_measured_only_max_calls_limits():
    capacity = Capacity(CapacityConfig(cores=2, cpu_target=0.8, max_calls=8))
    fed(capacity, 60, 0.03, 0)
    assert capacity.per_call is None
    assert capacity.spare(0) == 8 and capacity.spare(8) == 0


def test_each_call_is_charged_what_it_adds_over_the_idle_agent():
    capacity = Capacity(CapacityConfig(cores=2, cpu_target=0.8, max_calls=16))
    now, cpu = fed(capacity, 120, 0.04, 0)
    now, cpu = fed(capacity, 120, 0.04 + 2 * 0.25, 2, now, cpu)  # two calls at a quarter core each
    assert abs(capacity.idle_rate - 0.04) < 0.005
    assert abs(capacity.per_call - 0.25) < 0.01
    # (2 cores x 0.8 - 0.04) / 0.25 = 6.2 calls in all
    assert capacity.spare(2) == 4 and capacity.spare(6) == 0


def test_max_calls_still_caps_a_cheap_agent():
    capacity = Capacity(CapacityConfig(cores=2, cpu_target=0.8, max_calls=4))
    now, cpu = fed(capacity, 60, 0.0, 0)
    fed(capacity, 60, 0.01, 1, now, cpu)
    assert capacity.spare(1) == 3


def test_an_interval_in_which_calls_came_or_went_teaches_nothing():
    capacity = Capacity(CapacityConfig(cores=2, cpu_target=0.8, max_calls=16))
    capacity.observe(1.0, 0.0, 0)
    capacity.observe(2.0, 5.0, 3)  # a burst while calls were arriving
    assert capacity.per_call is None and capacity.idle_rate == 0.0


def test_a_target_of_0_turns_admission_by_cost_off():
    capacity = Capacity(CapacityConfig(cores=2, cpu_target=0.0, max_calls=8))
    now, cpu = fed(capacity, 60, 0.0, 0)
    fed(capacity, 60, 2.0, 1, now, cpu)  # one call taking both cores
    assert capacity.spare(1) == 7


def test_an_idle_agent_always_takes_one_call_however_costly_the_last_ones_were():
    capacity = Capacity(CapacityConfig(cores=2, cpu_target=0.1, max_calls=8))
    now, cpu = fed(capacity, 60, 0.03, 0)
    now, cpu = fed(capacity, 60, 1.0, 1, now, cpu)  # far beyond a tenth of the cores
    assert capacity.spare(1) == 0
    capacity.observe(now + 1, cpu, 0)
    assert capacity.spare(0) == 1
