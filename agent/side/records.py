"""Call records: one row per call, one per turn, written as each turn completes.

`CallStore` is the small repository interface the agent writes through;
`SqliteCallStore` keeps it in SQLite (WAL) under AGENT_DATA_DIR. A store for
PostgreSQL (several agents sharing one) implements the same methods.
"""

from __future__ import annotations

import json
import logging
import sqlite3
import threading
import time
from contextlib import closing
from dataclasses import asdict
from pathlib import Path
from typing import Protocol

from agent.call.record import CallRecord, TurnRecord
from agent.logs import event
from agent.side.unanswered import UnansweredQuestion

log = logging.getLogger(__name__)

_SCHEMA = """
CREATE TABLE IF NOT EXISTS calls (
    id TEXT PRIMARY KEY, sip_call_id TEXT, remote TEXT, dialed TEXT, codec TEXT, started REAL NOT NULL,
    ended REAL, outcome TEXT, reason TEXT, barge_ins INTEGER DEFAULT 0, dtmf TEXT DEFAULT '',
    transport TEXT DEFAULT 'sip');
CREATE TABLE IF NOT EXISTS turns (
    call_id TEXT NOT NULL REFERENCES calls(id) ON DELETE CASCADE, n INTEGER NOT NULL, started REAL NOT NULL,
    transcript TEXT, answer TEXT, sources TEXT, abstained INTEGER, outcome TEXT, latencies TEXT,
    hearing TEXT DEFAULT '{}', PRIMARY KEY (call_id, n));
CREATE INDEX IF NOT EXISTS calls_by_start ON calls (started);
"""


class CallStore(Protocol):
    def start_call(self, call: CallRecord) -> None: ...
    def add_turn(self, call: CallRecord, n: int, turn: TurnRecord) -> None: ...
    def end_call(self, call: CallRecord) -> None: ...
    def recent(self, limit: int = 50, with_turns: bool = False) -> list[dict]: ...
    def get(self, call_id: str) -> dict | None: ...
    def purge(self, older_than: float) -> int: ...
    def unanswered(self, since: float, limit: int) -> list[UnansweredQuestion]: ...


class SqliteCallStore:
    """CallStore in one SQLite file; safe to use from any thread."""

    def __init__(self, path: Path) -> None:
        self.path = path
        path.parent.mkdir(parents=True, exist_ok=True)
        self._lock = threading.Lock()
        try:
            self._create()
        except sqlite3.DatabaseError as exc:
            if isinstance(exc, sqlite3.OperationalError):
                raise  # locked or unreadable: nothing to conclude about the file itself
            # A damaged file must not keep the agent from starting (a container would restart forever):
            # it is kept aside for recovery, and a new store begins.
            aside = path.with_name(f"{path.name}.damaged-{int(time.time())}")
            for suffix in ("", "-wal", "-shm"):
                source = Path(f"{path}{suffix}")
                if source.exists():
                    source.rename(Path(f"{aside}{suffix}"))
            event(log, "records.damaged", logging.ERROR, error=str(exc)[:120], kept_as=aside.name)
            self._create()

    def _create(self) -> None:
        with self._connect() as db:
            db.executescript(_SCHEMA)
            # Stores written before a column existed keep their rows and gain the column.
            if "hearing" not in {row[1] for row in db.execute("PRAGMA table_info(turns)")}:
                db.execute("ALTER TABLE turns ADD COLUMN hearing TEXT DEFAULT '{}'")
            if "transport" not in {row[1] for row in db.execute("PRAGMA table_info(calls)")}:
                db.execute("ALTER TABLE calls ADD COLUMN transport TEXT DEFAULT 'sip'")

    def _connect(self) -> sqlite3.Connection:
        # A short wait: a locked store fails fast and the record writer retries (agent.side.writer).
        db = sqlite3.connect(self.path, timeout=2)
        db.execute("PRAGMA journal_mode=WAL")
        db.execute("PRAGMA foreign_keys=ON")
        db.row_factory = sqlite3.Row
        return db

    def _write(self, sql: str, args: tuple) -> int:
        with self._lock, closing(self._connect()) as db, db:
            return db.execute(sql, args).rowcount

    def start_call(self, call: CallRecord) -> None:
        self._write("INSERT OR REPLACE INTO calls (id, sip_call_id, remote, dialed, codec, started, transport) "
                    "VALUES (?, ?, ?, ?, ?, ?, ?)", (call.id, call.sip_call_id, call.remote, call.dialed, call.codec,
                                                     call.started, call.transport))

    def add_turn(self, call: CallRecord, n: int, turn: TurnRecord) -> None:
        latencies = {k: v for k, v in asdict(turn).items() if k.endswith("_ms") and v is not None}
        hearing = {k: v for k, v in (("asr_logprob", turn.asr_logprob), ("evidence", turn.evidence),
                                     ("first_heard", turn.first_heard), ("readings", turn.readings),
                                     ("topic", turn.topic), ("continues", turn.continues or None),
                                     ("answerer", turn.answerer), ("llm_reason", turn.llm_reason))
                   if v not in (None, "")}
        self._write("INSERT OR REPLACE INTO turns (call_id, n, started, transcript, answer, sources, abstained, "
                    "outcome, latencies, hearing) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                    (call.id, n, turn.started, turn.transcript, " ".join(turn.answer), json.dumps(turn.sources),
                     int(turn.abstained), turn.outcome, json.dumps(latencies), json.dumps(hearing)))

    def end_call(self, call: CallRecord) -> None:
        self._write("UPDATE calls SET ended = ?, outcome = ?, reason = ?, codec = ?, barge_ins = ?, dtmf = ? "
                    "WHERE id = ?", (call.ended, call.outcome, call.reason, call.codec, call.barge_ins,
                                     "".join(call.dtmf), call.id))

    def recent(self, limit: int = 50, with_turns: bool = False) -> list[dict]:
        """The latest calls, newest first; `with_turns`: each with its turns (as `get` gives them)."""
        with closing(self._connect()) as db:
            rows = db.execute("SELECT c.*, (SELECT COUNT(*) FROM turns t WHERE t.call_id = c.id) AS turns "
                              "FROM calls c ORDER BY started DESC LIMIT ?", (limit,)).fetchall()
            calls = [_call_row(row) for row in rows]
            if with_turns and calls:
                by_id = {call["id"]: call for call in calls}
                for call in calls:
                    call["turns"] = []
                marks = ",".join("?" * len(by_id))
                for t in db.execute(f"SELECT * FROM turns WHERE call_id IN ({marks}) ORDER BY call_id, n",
                                    tuple(by_id)).fetchall():
                    by_id[t["call_id"]]["turns"].append(_turn_row(t))
        return calls

    def get(self, call_id: str) -> dict | None:
        with closing(self._connect()) as db:
            row = db.execute("SELECT c.*, (SELECT COUNT(*) FROM turns t WHERE t.call_id = c.id) AS turns "
                             "FROM calls c WHERE id = ?", (call_id,)).fetchone()
            if row is None:
                return None
            turns = db.execute("SELECT * FROM turns WHERE call_id = ? ORDER BY n", (call_id,)).fetchall()
        call = _call_row(row)
        call["turns"] = [_turn_row(t) for t in turns]
        return call

    def unanswered(self, since: float, limit: int) -> list[UnansweredQuestion]:
        """The latest `limit` questions since `since` that the agent declined or asked to hear again."""
        with closing(self._connect()) as db:
            rows = db.execute("SELECT call_id, started, transcript, abstained, outcome FROM turns "
                              "WHERE started >= ? AND transcript != '' AND (outcome = 'asked again' OR "
                              "(outcome = 'answered' AND abstained = 1)) ORDER BY started DESC LIMIT ?",
                              (since, limit)).fetchall()
        return [UnansweredQuestion(r["transcript"], r["call_id"], r["started"],
                                   "asked again" if r["outcome"] == "asked again" else "declined") for r in rows]

    def purge(self, older_than: float) -> int:
        """Delete calls (and their turns) that started before `older_than` (epoch seconds)."""
        return self._write("DELETE FROM calls WHERE started < ?", (older_than,))


def _turn_row(t: sqlite3.Row) -> dict:
    return {"n": t["n"], "started": t["started"], "transcript": t["transcript"], "answer": t["answer"],
            "sources": json.loads(t["sources"]), "abstained": bool(t["abstained"]), "outcome": t["outcome"],
            "latencies_ms": json.loads(t["latencies"]), "hearing": json.loads(t["hearing"] or "{}")}


def _call_row(row: sqlite3.Row) -> dict:
    ended = row["ended"]
    return {"id": row["id"], "sip_call_id": row["sip_call_id"], "from": row["remote"], "to": row["dialed"],
            "codec": row["codec"], "transport": row["transport"], "started": row["started"], "ended": ended,
            "duration_s": round(ended - row["started"], 1) if ended else round(time.time() - row["started"], 1),
            "outcome": row["outcome"] or ("in progress" if ended is None else ""), "reason": row["reason"],
            "barge_ins": row["barge_ins"], "dtmf": row["dtmf"], "turns": row["turns"]}
