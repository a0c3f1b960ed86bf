"""eval.database_outage's check of the stored records against the agent's own log, on exact rows."""

import logging

from agent.logs import StructuredFormatter, event
from eval.database_outage import check_records, logged_turns


def agent_log(*turns: tuple[str, str]) -> str:
    """Log lines as the agent writes them: one `call.turn` event per (call, outcome)."""
    formatter, lines = StructuredFormatter(as_json=False), []

    class Collect(logging.Handler):
        def emit(self, record: logging.LogRecord) -> None:
            lines.append(formatter.format(record))

    log = logging.getLogger("test.database_outage")
    log.addHandler(handler := Collect())
    log.setLevel(logging.INFO)
    try:
        for call, outcome in turns:
            event(log, "call.turn", call=call, outcome=outcome, response_ms=600)
            event(log, "call.ended", call=call)
    finally:
        log.removeHandler(handler)
    return "\n".join(lines)


def test_the_log_gives_each_calls_outcomes_in_order_spaces_included():
    log = agent_log(("a@x", "answered"), ("b@x", "asked again"), ("a@x", "declined"))
    assert logged_turns(log) == {"a@x": ["answered", "declined"], "b@x": ["asked again"]}


def test_every_turn_stored_once_in_order_is_no_problem():
    logged = {"a@x": ["answered", "answered"]}
    assert check_records(logged, {"a@x": [[[1, 10.0, "answered"], [2, 12.0, "cut off"]]]}) == []


def test_a_call_stored_twice_a_missing_call_and_a_missing_turn_are_each_reported():
    logged = {"a@x": ["answered"], "b@x": ["answered", "declined"], "c@x": ["answered"]}
    stored = {"a@x": [[[1, 10.0, "answered"]], [[1, 10.0, "answered"]]], "b@x": [[[1, 11.0, "answered"]]]}
    problems = check_records(logged, stored)
    assert "call c@x is not stored" in problems
    assert "call a@x is stored 2 times" in problems
    assert any(p.startswith("call b@x: logged") for p in problems)


def test_turns_out_of_order_are_reported():
    logged = {"a@x": ["answered", "answered"]}
    assert check_records(logged, {"a@x": [[[1, 12.0, "answered"], [2, 10.0, "answered"]]]}) == [
        "call a@x: turns stored out of the order they began"]
