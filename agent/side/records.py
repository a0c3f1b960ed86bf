"""Call records: one row per call, one per turn, written as each turn completes.

`CallStore` is the small repository interface the agent writes through; `SqlCallStore` its SQL, shared by
`SqliteCallStore` (SQLite in WAL mode under AGENT_DATA_DIR, the embedded default) and `PostgresCallStore`
(records_pg.py: several agents sharing one database). Both migrate their schema forward at start-up and
refuse one newer than the code.
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

SCHEMA_VERSION = 5
"""The records' schema this code writes; a store at a newer version (a newer agent migrated it) is refused."""


def migrations(dialect: str) -> list[list[str]]:
    """Step n brings a store from version n to n + 1 ("sqlite" or "postgresql"; the SQL is otherwise shared)."""
    real = "DOUBLE PRECISION" if dialect == "postgresql" else "REAL"
    return [
        [f"""CREATE TABLE IF NOT EXISTS calls (
            id TEXT PRIMARY KEY, sip_call_id TEXT, remote TEXT, dialed TEXT, codec TEXT, started {real} NOT NULL,
            ended {real}, outcome TEXT, reason TEXT, barge_ins INTEGER DEFAULT 0, dtmf TEXT DEFAULT '',
            transport TEXT DEFAULT 'sip')""",
         f"""CREATE TABLE IF NOT EXISTS turns (
            call_id TEXT NOT NULL REFERENCES calls(id) ON DELETE CASCADE, n INTEGER NOT NULL, started {real} NOT NULL,
            transcript TEXT, answer TEXT, sources TEXT, abstained INTEGER, outcome TEXT, latencies TEXT,
            hearing TEXT DEFAULT '{{}}', PRIMARY KEY (call_id, n))""",
         "CREATE INDEX IF NOT EXISTS calls_by_start ON calls (started)"],
        ["ALTER TABLE calls ADD COLUMN instance TEXT DEFAULT ''"],  # which agent took the call
        [f"""CREATE TABLE IF NOT EXISTS kb_versions (
            instance TEXT NOT NULL, profile TEXT NOT NULL, version TEXT NOT NULL, updated {real} NOT NULL,
            PRIMARY KEY (instance, profile))"""],  # each agent's index, by profile
        [f"""CREATE TABLE IF NOT EXISTS messages (
            id TEXT PRIMARY KEY, instance TEXT NOT NULL, started {real} NOT NULL, note TEXT NOT NULL,
            audio {"BYTEA" if dialect == "postgresql" else "BLOB"} NOT NULL)"""],  # with a shared database
        [f"""CREATE TABLE IF NOT EXISTS recordings (
            call_id TEXT PRIMARY KEY, instance TEXT NOT NULL, started {real} NOT NULL,
            audio {"BYTEA" if dialect == "postgresql" else "BLOB"} NOT NULL)""",  # whole calls, on a shared database
         "ALTER TABLE calls ADD COLUMN transfers TEXT DEFAULT '[]'"],  # each try to put the caller through
    ]


class StoreUnavailable(OSError):
    """The store cannot be reached now (a database that is down): the record writer retries the write."""


class StoreError(RuntimeError):
    """The store cannot be used by this agent (a schema newer than the code)."""


def migrate(run, fetch, dialect: str) -> int:
    """Bring the store to SCHEMA_VERSION inside the caller's transaction; returns the version found.
    `run(sql)` executes, `fetch(sql)` returns rows."""
    run("CREATE TABLE IF NOT EXISTS schema_version (version INTEGER NOT NULL)")
    rows = fetch("SELECT version FROM schema_version")
    found = rows[0][0] if rows else 0
    if found > SCHEMA_VERSION:
        raise StoreError(f"call records are at schema version {found}, newer than this agent's {SCHEMA_VERSION}: "
                         "run the newer agent, or restore a backup from before it")
    for step in migrations(dialect)[found:]:
        for sql in step:
            run(sql)
    if not rows:
        run(f"INSERT INTO schema_version (version) VALUES ({SCHEMA_VERSION})")
    elif found < SCHEMA_VERSION:
        run(f"UPDATE schema_version SET version = {SCHEMA_VERSION}")
    return found


class CallStore(Protocol):
    def start_call(self, call: CallRecord) -> None: ...
    def add_turn(self, call: CallRecord, n: int, turn: TurnRecord) -> None: ...
    def end_call(self, call: CallRecord) -> None: ...
    def recent(self, limit: int = 50, with_turns: bool = False, instance: str | None = None) -> list[dict]: ...
    def get(self, call_id: str) -> dict | None: ...
    def purge(self, older_than: float) -> int: ...
    def unanswered(self, since: float, limit: int, instance: str | None = None) -> list[UnansweredQuestion]: ...
    def save_recording(self, call_id: str, started: float, path: Path) -> None: ...
    def recording(self, call_id: str) -> bytes | None: ...
    def recorded(self, call_ids: list[str]) -> set[str]: ...


class SqlCallStore:
    """The SQL of a CallStore, shared by both backends; a backend gives `execute(sql, args) -> rowcount` and
    `fetch(sql, args) -> rows` (rows indexable by column name), with `?` placeholders. Every write is idempotent
    (an upsert by call id and turn number): the record writer may retry one that did land."""

    instance = ""
    """The agent these calls are recorded as taken by (AGENT_INSTANCE)."""

    def execute(self, sql: str, args: tuple) -> int:
        raise NotImplementedError

    def fetch(self, sql: str, args: tuple) -> list:
        raise NotImplementedError

    def start_call(self, call: CallRecord) -> None:
        self.execute("INSERT INTO calls (id, sip_call_id, remote, dialed, codec, started, transport, instance) "
                    "VALUES (?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT (id) DO UPDATE SET "
                    "sip_call_id = excluded.sip_call_id, remote = excluded.remote, dialed = excluded.dialed, "
                    "codec = excluded.codec, started = excluded.started, transport = excluded.transport, "
                    "instance = excluded.instance",
                    (call.id, call.sip_call_id, call.remote, call.dialed, call.codec, call.started, call.transport,
                     self.instance))

    def add_turn(self, call: CallRecord, n: int, turn: TurnRecord) -> None:
        latencies = {k: v for k, v in asdict(turn).items() if k.endswith("_ms") and v is not None}
        hearing = {k: v for k, v in (("asr_logprob", turn.asr_logprob), ("evidence", turn.evidence),
                                     ("first_heard", turn.first_heard), ("heard_again", turn.heard_again or None),
                                     ("readings", turn.readings),
                                     ("topic", turn.topic), ("continues", turn.continues or None),
                                     ("answerer", turn.answerer), ("llm_reason", turn.llm_reason))
                   if v not in (None, "")}
        self.execute("INSERT INTO turns (call_id, n, started, transcript, answer, sources, abstained, outcome, "
                    "latencies, hearing) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT (call_id, n) DO UPDATE "
                    "SET started = excluded.started, transcript = excluded.transcript, answer = excluded.answer, "
                    "sources = excluded.sources, abstained = excluded.abstained, outcome = excluded.outcome, "
                    "latencies = excluded.latencies, hearing = excluded.hearing",
                    (call.id, n, turn.started, turn.transcript, " ".join(turn.answer), json.dumps(turn.sources),
                     int(turn.abstained), turn.outcome, json.dumps(latencies), json.dumps(hearing)))

    def end_call(self, call: CallRecord) -> None:
        self.execute("UPDATE calls SET ended = ?, outcome = ?, reason = ?, codec = ?, barge_ins = ?, dtmf = ?, "
                    "transfers = ? WHERE id = ?", (call.ended, call.outcome, call.reason, call.codec, call.barge_ins,
                                                  "".join(call.dtmf), json.dumps(call.transfers), call.id))

    def recent(self, limit: int = 50, with_turns: bool = False, instance: str | None = None) -> list[dict]:
        """The latest calls of every agent on this store, newest first (only `instance`'s when given);
        `with_turns`: each with its turns (as `get` gives them)."""
        where, args = ("WHERE c.instance = ? ", (instance,)) if instance is not None else ("", ())
        rows = self.fetch("SELECT c.*, (SELECT COUNT(*) FROM turns t WHERE t.call_id = c.id) AS turns "
                          f"FROM calls c {where}ORDER BY started DESC LIMIT ?", (*args, limit))
        calls = [_call_row(row) for row in rows]
        if with_turns and calls:
            by_id = {call["id"]: call for call in calls}
            for call in calls:
                call["turns"] = []
            marks = ",".join("?" * len(by_id))
            for t in self.fetch(f"SELECT * FROM turns WHERE call_id IN ({marks}) ORDER BY call_id, n", tuple(by_id)):
                by_id[t["call_id"]]["turns"].append(_turn_row(t))
        return calls

    def get(self, call_id: str) -> dict | None:
        rows = self.fetch("SELECT c.*, (SELECT COUNT(*) FROM turns t WHERE t.call_id = c.id) AS turns "
                          "FROM calls c WHERE id = ?", (call_id,))
        if not rows:
            return None
        call = _call_row(rows[0])
        call["turns"] = [_turn_row(t) for t in self.fetch("SELECT * FROM turns WHERE call_id = ? ORDER BY n",
                                                          (call_id,))]
        return call

    def unanswered(self, since: float, limit: int, instance: str | None = None) -> list[UnansweredQuestion]:
        """The latest `limit` questions since `since` that the agent declined or asked to hear again (only on
        `instance`'s calls when given)."""
        mine, args = ("AND t.call_id IN (SELECT id FROM calls WHERE instance = ?) ", (instance,)) \
            if instance is not None else ("", ())
        rows = self.fetch("SELECT t.call_id, t.started, t.transcript, t.abstained, t.outcome FROM turns t "
                          "WHERE t.started >= ? AND t.transcript != '' AND (t.outcome = 'asked again' OR "
                          f"(t.outcome = 'answered' AND t.abstained = 1)) {mine}ORDER BY t.started DESC LIMIT ?",
                          (since, *args, limit))
        return [UnansweredQuestion(r["transcript"], r["call_id"], r["started"],
                                   "asked again" if r["outcome"] == "asked again" else "declined") for r in rows]

    def purge(self, older_than: float) -> int:
        """Delete calls (their turns and recordings) that started before `older_than` (epoch seconds)."""
        self.execute("DELETE FROM recordings WHERE started < ?", (older_than,))
        return self.execute("DELETE FROM calls WHERE started < ?", (older_than,))

    def save_recording(self, call_id: str, started: float, path: Path) -> None:
        """A whole call's recording (side.recordings), so every agent of a line can serve it."""
        self.execute("INSERT INTO recordings (call_id, instance, started, audio) VALUES (?, ?, ?, ?) "
                    "ON CONFLICT (call_id) DO UPDATE SET audio = excluded.audio",
                    (call_id, self.instance, started, path.read_bytes()))

    def recorded(self, call_ids: list[str]) -> set[str]:
        """Which of these calls have a recording in the store."""
        if not call_ids:
            return set()
        marks = ", ".join("?" * len(call_ids))
        return {r["call_id"] for r in self.fetch(f"SELECT call_id FROM recordings WHERE call_id IN ({marks})",
                                                 tuple(call_ids))}

    def recording(self, call_id: str) -> bytes | None:
        rows = self.fetch("SELECT audio FROM recordings WHERE call_id = ?", (call_id,))
        return bytes(rows[0]["audio"]) if rows else None

    def kb_indexed(self, profile: str, version: str) -> None:
        """This agent's index of `profile` is now at `version` (Snapshot.version)."""
        self.execute("INSERT INTO kb_versions (instance, profile, version, updated) VALUES (?, ?, ?, ?) "
                    "ON CONFLICT (instance, profile) DO UPDATE SET version = excluded.version, "
                    "updated = excluded.updated", (self.instance, profile, version, time.time()))

    def kb_versions(self) -> list[dict]:
        """Every agent's index version of every profile, as last recorded."""
        return [{"instance": r["instance"], "profile": r["profile"], "version": r["version"],
                 "updated": r["updated"]}
                for r in self.fetch("SELECT * FROM kb_versions ORDER BY instance, profile", ())]


class SqliteCallStore(SqlCallStore):
    """CallStore in one SQLite file; safe to use from any thread."""

    def __init__(self, path: Path, instance: str = "") -> None:
        self.path, self.instance = path, instance
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
        with closing(self._connect()) as db, db:
            # Stores written before the schema had a version keep their rows and gain the columns added since.
            for table, column, default in (("turns", "hearing", "'{}'"), ("calls", "transport", "'sip'")):
                columns = {row[1] for row in db.execute(f"PRAGMA table_info({table})")}
                if columns and column not in columns:
                    db.execute(f"ALTER TABLE {table} ADD COLUMN {column} TEXT DEFAULT {default}")
            migrate(db.execute, lambda sql: db.execute(sql).fetchall(), "sqlite")

    def _connect(self) -> sqlite3.Connection:
        # A short wait: a locked store fails fast and the record writer retries (agent.side.writer).
        db = sqlite3.connect(self.path, timeout=2)
        db.execute("PRAGMA journal_mode=WAL")
        db.execute("PRAGMA foreign_keys=ON")
        db.row_factory = sqlite3.Row
        return db

    def execute(self, sql: str, args: tuple) -> int:
        with self._lock, closing(self._connect()) as db, db:
            return db.execute(sql, args).rowcount

    def fetch(self, sql: str, args: tuple) -> list:
        with closing(self._connect()) as db:
            return db.execute(sql, args).fetchall()


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
            "instance": row["instance"] or "",
            "barge_ins": row["barge_ins"], "dtmf": row["dtmf"], "turns": row["turns"],
            "transfers": json.loads(row["transfers"] or "[]")}
