"""The circuit breaker that stops asking a failing LLM server for a while."""

from agent.llm.breaker import Breaker


class Clock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def test_repeated_failures_open_it_for_the_cool_off_then_one_more_try_is_allowed():
    clock = Clock()
    breaker = Breaker(3, 30.0, clock)
    breaker.failure()
    breaker.failure()
    assert not breaker.open
    breaker.failure()
    assert breaker.open
    clock.now += 31
    assert not breaker.open
    breaker.failure()  # the one try after the cool-off failed too
    assert breaker.open


def test_a_success_in_between_starts_the_count_again():
    breaker = Breaker(2, 30.0, Clock())
    breaker.failure()
    breaker.success()
    breaker.failure()
    assert not breaker.open
