"""Call records several agents share (PostgreSQL; SQLite alike): the whole line's calls, each with the agent that
took it; writes that land twice land once; a schema migrated forward, and one newer than the code refused."""

import sqlite3

import pytest

from agent.call.record import CallRecord, TurnRecord
from agent.side.records import SCHEMA_VERSION, SqliteCallStore, StoreError


def _call(n: int) -> CallRecord:
    return CallRecord(f"id{n}", f"sip-{n}", "<sip:caller@127.0.0.1>", "200", 1000.0 + n, codec="PCMU/8000")


def test_every_agent_sees_the_whole_lines_calls_each_with_the_agent_that_took_it(open_store):
    first, second = open_store(instance="agent-a"), open_store(instance="agent-b")
    for n, store in enumerate((first, second, first), 1):
        store.start_call(_call(n))
    for store in (first, second):
        assert [(c["id"], c["instance"]) for c in store.recent()] == \
            [("id3", "agent-a"), ("id2", "agent-b"), ("id1", "agent-a")]
    assert [c["id"] for c in second.recent(instance="agent-a")] == ["id3", "id1"]


def test_a_write_retried_after_it_landed_lands_once(open_store):
    store = open_store()
    call = _call(1)
    turn = TurnRecord(started=1.0, transcript="do you take cheques", answer=["We do not."], outcome="answered")
    for _ in range(2):  # the record writer retries a write whose acknowledgement was lost
        store.start_call(call)
        store.add_turn(call, 1, turn)
    turn.outcome = "cut off"  # a turn is written again when it is taken back
    store.add_turn(call, 1, turn)
    (recorded,) = store.recent()
    assert recorded["turns"] == 1 and store.get("id1")["turns"][0]["outcome"] == "cut off"


def test_a_call_recorded_by_one_agent_is_served_by_another_and_goes_with_its_record(open_store, tmp_path):
    first, second = open_store(instance="agent-a"), open_store(instance="agent-b")
    first.start_call(_call(1))
    wav = tmp_path / "id1.wav"
    wav.write_bytes(b"RIFF....WAVE" + bytes(100))
    for _ in range(2):  # written again by the record writer: one copy
        first.save_recording("id1", 1001.0, wav)
    assert second.recording("id1") == wav.read_bytes() and second.recorded(["id1", "id2"]) == {"id1"}
    second.purge(2000.0)
    assert first.recording("id1") is None and first.recorded(["id1"]) == set()


def test_a_store_from_before_the_schema_had_a_version_is_migrated_and_keeps_its_rows(tmp_path):
    path = tmp_path / "calls.sqlite3"
    with sqlite3.connect(path) as db:  # the tables as the first release wrote them
        db.execute("CREATE TABLE calls (id TEXT PRIMARY KEY, sip_call_id TEXT, remote TEXT, dialed TEXT, codec TEXT, "
                   "started REAL NOT NULL, ended REAL, outcome TEXT, reason TEXT, barge_ins INTEGER DEFAULT 0, "
                   "dtmf TEXT DEFAULT '')")
        db.execute("CREATE TABLE turns (call_id TEXT NOT NULL, n INTEGER NOT NULL, started REAL NOT NULL, "
                   "transcript TEXT, answer TEXT, sources TEXT, abstained INTEGER, outcome TEXT, latencies TEXT, "
                   "PRIMARY KEY (call_id, n))")
        db.execute("INSERT INTO calls (id, started) VALUES ('old', 5.0)")
    store = SqliteCallStore(path, "agent-a")
    assert store.get("old")["instance"] == "" and store.get("old")["transport"] == "sip"
    with sqlite3.connect(path) as db:
        assert db.execute("SELECT version FROM schema_version").fetchall() == [(SCHEMA_VERSION,)]


def test_a_schema_newer_than_the_code_is_refused(open_store):
    store = open_store()
    store.start_call(_call(1))  # reached and migrated
    newer = SCHEMA_VERSION + 1
    store.execute(f"UPDATE schema_version SET version = {newer}", ())
    if isinstance(store, SqliteCallStore):
        with pytest.raises(StoreError, match=f"schema version {newer}, newer than this agent's"):
            SqliteCallStore(store.path)
    else:
        store.close()
        with pytest.raises(StoreError, match=f"schema version {newer}, newer than this agent's"):
            store.connect()


def test_the_unanswered_questions_of_one_agent_can_be_asked_for(open_store):
    first, second = open_store(instance="agent-a"), open_store(instance="agent-b")
    for n, store in ((1, first), (2, second)):
        call = _call(n)
        store.start_call(call)
        store.add_turn(call, 1, TurnRecord(started=2000.0 + n, transcript=f"pizza {n}", outcome="answered",
                                           abstained=True))
    assert [q.text for q in first.unanswered(since=0.0, limit=10)] == ["pizza 2", "pizza 1"]
    assert [q.text for q in first.unanswered(since=0.0, limit=10, instance="agent-b")] == ["pizza 2"]
