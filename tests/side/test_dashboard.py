"""The owner's dashboard page, rendered from exact records: escaped, charted, and every section present."""

import re
from html import unescape

from agent.side.dashboard import calls_per_hour, latency_histogram, render_dashboard

NOW = 1_700_000_000.0


def _call(n, started, turns):
    return {"id": f"id{n}", "from": "<sip:+15551234@pbx>", "to": "200", "started": started, "duration_s": 30.0,
            "outcome": "caller hung up", "turns": turns}


def _turn(text, answer, ms, abstained=False, outcome="answered"):
    return {"transcript": text, "answer": answer, "abstained": abstained, "outcome": outcome,
            "latencies_ms": {"response_ms": ms}, "sources": ["prices.md#abc"]}


CALLS = [_call(1, NOW - 600, [_turn("How much is a service?", "It costs $149.", 480),
                             _turn("<script>alert(1)</script>", "Sorry, I don't have information about that.", 520,
                                   abstained=True)]),
         _call(2, NOW - 7200, [_turn("What are your hours?", "8 to 6.", 2400)])]
MESSAGES = [{"id": "0123456789abcdef", "call_id": "id1", "caller": "<sip:+15551234@pbx>", "dialed": "200",
             "started": NOW - 500, "seconds": 6.2, "ended_by": "silence", "transcript": "Please call me back.",
             "audio": "/messages/0123456789abcdef.wav"}]
GROUPS = [{"question": "Do you fit air con?", "count": 3, "declined": 2, "asked_again": 1, "first": "2023-11-01",
           "last": "2023-11-14", "calls": ["id1"], "variants": ["Do you fit air con?", "aircon installation"]}]


def bars(svg: str) -> dict[str, int]:
    return {unescape(label): int(count) for label, count in re.findall(r"<title>([^<]*): (\d+)</title>", svg)}


def test_the_latency_histogram_counts_each_turn_in_its_bucket():
    counts = bars(latency_histogram([480, 520, 2400, 9000]))
    assert counts["≤500"] == 1 and counts["≤750"] == 1 and counts["≤3000"] == 1 and counts[">3000"] == 1
    assert sum(counts.values()) == 4


def test_calls_per_hour_counts_the_last_24_hours_only():
    svg = calls_per_hour([NOW - 600, NOW - 700, NOW - 7200, NOW - 90_000], NOW)
    assert sorted(bars(svg).values())[-2:] == [1, 2] and sum(bars(svg).values()) == 3


def test_the_page_shows_calls_messages_and_unanswered_questions():
    page = render_dashboard(CALLS, MESSAGES, GROUPS, NOW)
    assert "How much is a service?" in page and "It costs $149." in page and "480 ms" in page
    assert "<audio controls preload='none' src='/messages/0123456789abcdef.wav'>" in page
    assert "Please call me back." in page and "Do you fit air con?" in page and "× 3" in page
    assert "also: aircon installation" in page


def test_everything_a_caller_can_influence_is_escaped():
    page = render_dashboard(CALLS, MESSAGES, GROUPS, NOW)
    assert "<script>" not in page and "&lt;script&gt;alert(1)&lt;/script&gt;" in page
    assert "&lt;sip:+15551234@pbx&gt;" in page


def test_an_empty_agent_has_a_page_too():
    page = render_dashboard([], [], [], NOW)
    assert "No calls yet." in page and "No messages." in page and "Nothing unanswered." in page


def test_a_call_that_did_not_come_over_sip_says_how_it_came():
    browser_call = {**_call(3, NOW - 60, []), "from": "browser:127.0.0.1", "to": "browser", "transport": "webrtc"}
    page = render_dashboard([browser_call, {**CALLS[1], "transport": "sip"}], [], [], NOW)
    assert "browser:127.0.0.1 → browser (webrtc)" in page and "(sip)" not in page


def test_a_turn_answered_from_another_reading_shows_what_was_heard_first():
    turn = {**_turn("How far will you travel?", "25 miles.", 700),
            "hearing": {"first_heard": "Half our <b>will</b> you travel.", "readings": 4}}
    page = render_dashboard([_call(4, NOW - 60, [turn])], [], [], NOW)
    assert "first heard as “Half our &lt;b&gt;will&lt;/b&gt; you travel.”; another reading" in page
    assert "first heard as" not in render_dashboard(CALLS, [], [], NOW)


def test_a_confirmation_shows_the_topic_the_agent_asked_about():
    turn = {**_turn("Do you do power flashes?", "", 640, outcome="confirming"),
            "hearing": {"topic": "the power flush"}}
    page = render_dashboard([_call(4, NOW - 60, [turn])], [], [], NOW)
    assert "Are you asking about the power flush?" in page and "confirming" in page
