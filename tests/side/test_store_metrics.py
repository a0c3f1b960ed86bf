"""Call records in SQLite and the metrics summary, on exact data."""

import asyncio
import time

from agent.call.record import CallRecord, TurnRecord
from agent.side.metrics import Metrics, summary_markdown
from agent.side.records import SqliteCallStore


def _call(n=1, started=None):
    return CallRecord(f"id{n}", f"sip-{n}", "<sip:caller@127.0.0.1>", "200", started or time.time(), codec="PCMU/8000")


def test_a_completed_turn_survives_a_crash_mid_call(open_store):
    store = open_store()
    call = _call()
    store.start_call(call)
    store.add_turn(call, 1, TurnRecord(started=1.0, transcript="do you take cheques", answer=["We do not."],
                                       sources=["prices.md#abc"], outcome="answered", response_ms=812.0))
    reopened = open_store().get("id1")  # as after a restart, without end_call
    assert reopened["outcome"] == "in progress"
    (turn,) = reopened["turns"]
    assert turn["transcript"] == "do you take cheques" and turn["sources"] == ["prices.md#abc"]
    assert turn["latencies_ms"] == {"response_ms": 812.0}


def test_ended_calls_list_newest_first_with_their_outcome(open_store):
    store = open_store()
    for n in (1, 2):
        call = _call(n, started=1000.0 + n)
        store.start_call(call)
        call.ended, call.outcome, call.dtmf = 1010.0 + n, "caller hung up", ["*"]
        store.end_call(call)
    recent = store.recent()
    assert [c["id"] for c in recent] == ["id2", "id1"]
    assert recent[0]["duration_s"] == 10.0 and recent[0]["outcome"] == "caller hung up" and recent[0]["dtmf"] == "*"
    assert store.get("nope") is None


def test_retention_purges_old_calls_and_their_turns(open_store):
    store = open_store()
    old, new = _call(1, started=100.0), _call(2, started=10_000.0)
    for call in (old, new):
        store.start_call(call)
    store.add_turn(old, 1, TurnRecord(started=100.0))
    assert store.purge(older_than=5_000.0) == 1
    assert [c["id"] for c in store.recent()] == ["id2"]


def test_a_call_keeps_the_transport_that_carried_it(open_store):
    store = open_store()
    call = CallRecord("idw", "webrtc-1", "browser:127.0.0.1", "browser", time.time(), transport="webrtc")
    store.start_call(call)
    assert store.get("idw")["transport"] == "webrtc" and store.recent()[0]["transport"] == "webrtc"


def test_summary_percentiles_over_the_window():
    metrics = Metrics(window_s=60)
    for i, ms in enumerate([100, 200, 300, 400, 500]):
        metrics.observe("response", ms / 1000, now=1000.0 + i)
    metrics.observe("asr", 0.5, now=900.0)  # outside the window by the time of the summary
    summary = metrics.summary(now=1010.0)
    assert summary["response"] == {"count": 5, "p50_ms": 300.0, "p90_ms": 460.0, "p95_ms": 480.0, "p99_ms": 496.0}
    assert summary["asr"] == {"count": 0}
    assert "| response | 5 | 300.0 | 460.0 | 480.0 | 496.0 |" in summary_markdown(summary, 60)


def test_how_well_a_turn_was_heard_is_kept_and_an_older_store_gains_the_column(tmp_path):
    import sqlite3

    path = tmp_path / "calls.db"
    with sqlite3.connect(path) as db:  # a store from before turns recorded hearing
        db.executescript("CREATE TABLE calls (id TEXT PRIMARY KEY, sip_call_id TEXT, remote TEXT, dialed TEXT, "
                         "codec TEXT, started REAL NOT NULL, ended REAL, outcome TEXT, reason TEXT, barge_ins "
                         "INTEGER DEFAULT 0, dtmf TEXT DEFAULT ''); CREATE TABLE turns (call_id TEXT NOT NULL, "
                         "n INTEGER NOT NULL, started REAL NOT NULL, transcript TEXT, answer TEXT, sources TEXT, "
                         "abstained INTEGER, outcome TEXT, latencies TEXT, PRIMARY KEY (call_id, n));"
                         "INSERT INTO calls (id, started) VALUES ('old', 1.0);"
                         "INSERT INTO turns VALUES ('old', 1, 1.0, 'hi', 'hello', '[]', 0, 'answered', '{}');")
    store = SqliteCallStore(path)
    assert store.get("old")["turns"][0]["hearing"] == {}  # nothing already stored is lost
    assert store.get("old")["transport"] == "sip"  # calls before the transport column were all SIP
    call = _call()
    store.start_call(call)
    store.add_turn(call, 1, TurnRecord(started=1.0, transcript="what will our empty", outcome="asked again",
                                       asr_logprob=-0.71, evidence=0.21))
    assert store.get("id1")["turns"][0]["hearing"] == {"asr_logprob": -0.71, "evidence": 0.21}
    assert store.get("id1")["turns"][0]["outcome"] == "asked again"


def test_a_damaged_store_is_kept_aside_and_a_new_one_begins(tmp_path):
    path = tmp_path / "calls.db"
    path.write_bytes(b"this is not a SQLite database, it was damaged on a full disk" * 100)
    store = SqliteCallStore(path)
    assert store.recent() == []  # the agent starts with an empty store instead of failing to start
    (aside,) = tmp_path.glob("calls.db.damaged-*")
    assert aside.read_bytes().startswith(b"this is not a SQLite")  # nothing already stored is thrown away


def test_cpu_per_answered_turn_is_what_the_process_spent_between_answers():
    metrics = Metrics(window_s=600)
    assert metrics.cpu_per_turn() is None
    metrics.observe("response", 0.5)
    started = time.process_time()
    while time.process_time() - started < 0.2:  # the work of the next turn
        sum(range(10_000))
    metrics.observe("response", 0.5)
    assert 0.2 <= metrics.cpu_per_turn() < 1.0
    assert metrics.registry.get_sample_value("agent_process_cpu_seconds") >= 0.2


def test_declined_and_asked_again_turns_are_the_unanswered_questions(open_store):
    store = open_store()
    call = _call()
    store.start_call(call)
    turns = [("what are your hours", "answered", False), ("do you sell pizza", "answered", True),
             ("what warren t", "asked again", False), ("", "answered", True), ("old question", "answered", True)]
    for n, (text, outcome, abstained) in enumerate(turns, 1):
        store.add_turn(call, n, TurnRecord(started=1000.0 + n if text != "old question" else 10.0, transcript=text,
                                           outcome=outcome, abstained=abstained))
    found = store.unanswered(since=500.0, limit=10)
    assert [(q.text, q.outcome, q.call_id) for q in found] == [("what warren t", "asked again", "id1"),
                                                               ("do you sell pizza", "declined", "id1")]
    assert len(store.unanswered(since=0.0, limit=1)) == 1


def test_the_reading_acted_on_is_counted_and_what_was_heard_first_and_confirmed_is_kept(tmp_path):
    from agent.side.reporter import Reporter

    metrics = Metrics()
    reporter = Reporter(metrics, SqliteCallStore(tmp_path / "reported.sqlite3"))
    call = _call()
    reporter.call_started(call)  # so the reporter's own record writes find their call
    confirming = TurnRecord(started=1.0, transcript="How far will you travel?", outcome="confirming", readings=4,
                            first_heard="Half our will you travel.", topic="service area")
    reporter.turn_done(call, confirming)
    reporter.turn_done(call, TurnRecord(started=2.0, transcript="Yes.", outcome="confirmed", readings=1))
    reporter.turn_done(call, TurnRecord(started=3.0, transcript="do you take cheques", outcome="answered",
                                        readings=2))
    count = metrics.registry.get_sample_value
    assert count("agent_readings_chosen_total", {"reading": "other"}) == 1
    assert count("agent_readings_chosen_total", {"reading": "first"}) == 2
    assert count("agent_turns_total", {"outcome": "confirming"}) == 1
    assert count("agent_turns_total", {"outcome": "confirmed"}) == 1
    store = SqliteCallStore(tmp_path / "calls.sqlite3")
    store.start_call(call)
    store.add_turn(call, 1, confirming)
    (turn,) = store.get("id1")["turns"]
    assert turn["hearing"] == {"first_heard": "Half our will you travel.", "readings": 4, "topic": "service area"}


def test_an_answer_taken_back_is_rewritten_as_cut_off_and_counted(tmp_path):
    from agent.side.reporter import Reporter

    metrics, store = Metrics(), SqliteCallStore(tmp_path / "calls.sqlite3")
    reporter = Reporter(metrics, store)
    call = _call()
    reporter.call_started(call)
    turn = TurnRecord(started=1.0, transcript="What are your opening hours?", outcome="answered")
    call.turns.append(turn)  # as the session does: a turn is numbered by its place in the call
    reporter.turn_done(call, turn)
    turn.outcome = "cut off"
    reporter.turn_cut_off(call, 1, turn)
    call.turns.append(TurnRecord(started=2.0, transcript="What are your opening hours on a Saturday?",
                                 outcome="answered", continues=True))
    reporter.turn_done(call, call.turns[-1])
    assert asyncio.run(reporter.flush(10))
    first, whole = store.get("id1")["turns"]
    assert first["outcome"] == "cut off" and whole["hearing"] == {"continues": True}
    assert metrics.registry.get_sample_value("agent_cut_offs_total") == 1


def test_who_phrased_each_answer_is_counted_kept_and_shown(tmp_path):
    from agent.side.dashboard import render_dashboard
    from agent.side.reporter import Reporter

    metrics = Metrics()
    store = SqliteCallStore(tmp_path / "answerers.sqlite3")
    reporter = Reporter(metrics, store)
    call = _call()
    reporter.call_started(call)
    turns = [TurnRecord(started=1.0, transcript="Is there parking?", answer=["Yes, parking is free."],
                        outcome="answered", answerer="llm", llm_first_sentence_ms=640.0),
             TurnRecord(started=2.0, transcript="How much?", answer=["A service costs $149."], outcome="answered",
                        answerer="llm_rejected", llm_reason="unsupported: 99 dollar")]
    for turn in turns:
        call.turns.append(turn)
        reporter.turn_done(call, turn)
    asyncio.run(reporter.flush(10))
    count = metrics.registry.get_sample_value
    assert count("agent_answers_total", {"answerer": "llm"}) == 1
    assert count("agent_answers_total", {"answerer": "llm_rejected"}) == 1
    assert count("agent_llm_first_sentence_seconds_count") == 1
    first, second = store.get(call.id)["turns"]
    assert first["hearing"]["answerer"] == "llm" and first["latencies_ms"]["llm_first_sentence_ms"] == 640.0
    assert second["hearing"]["llm_reason"] == "unsupported: 99 dollar"
    page = render_dashboard(store.recent(with_turns=True), [], [], time.time())
    assert "phrased by the LLM" in page and "not used (unsupported: 99 dollar); KB sentences spoken" in page


def test_metrics_show_the_transcribers_decodes_at_each_scrape(models):
    import numpy as np
    from prometheus_client import generate_latest

    metrics = Metrics()
    metrics.count_decodes(models.transcriber)
    before = models.transcriber.decoded
    models.transcriber.transcribe(np.zeros(16000, dtype=np.float32))
    assert f"agent_asr_decodes {before + 1}.0" in generate_latest(metrics.registry).decode()
