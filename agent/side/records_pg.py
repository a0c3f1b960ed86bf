"""Call records in PostgreSQL (AGENT_DATABASE_URL), shared by every agent on a line: any agent's /calls and
dashboard show the whole line's calls, each with the instance that took it.

One connection per store, used under a lock from the record writer's thread and the side app's threads. A
database that is down fails the operation at once (a 3 s connect timeout): the record writer keeps the write and
retries it in order (agent/side/writer.py), and the next operation connects again. Start-up does not wait for
it either; the schema is migrated on the first connection that succeeds.
"""

from __future__ import annotations

import logging
import threading

import psycopg
from psycopg.rows import dict_row

from agent.logs import event
from agent.side.records import SqlCallStore, StoreUnavailable, migrate

log = logging.getLogger(__name__)

CONNECT_TIMEOUT_S = 3
_MIGRATION_LOCK = 0x7265636f  # pg_advisory_xact_lock key: two agents starting together migrate one at a time


class PostgresCallStore(SqlCallStore):
    def __init__(self, url: str, instance: str) -> None:
        self._url, self.instance = url, instance
        self._lock = threading.Lock()
        self._db: psycopg.Connection | None = None
        self.schema_found: int | None = None
        """The schema version the database had when this agent first reached it (None: not reached yet)."""

    def connect(self) -> None:
        """Reach the database now (and migrate it), raising what stops it; a StoreError (a newer schema) is for
        start-up to report, anything else only means the database is not there yet."""
        with self._lock:
            self._connection()

    def _connection(self) -> psycopg.Connection:
        if self._db is None or self._db.closed:
            db = psycopg.connect(self._url, autocommit=True, connect_timeout=CONNECT_TIMEOUT_S, row_factory=dict_row)
            try:
                with db.transaction():
                    db.execute("SELECT pg_advisory_xact_lock(%s)", (_MIGRATION_LOCK,))
                    found = migrate(db.execute, lambda sql: [tuple(r.values()) for r in db.execute(sql).fetchall()],
                                    "postgresql")
            except BaseException:
                db.close()
                raise
            if self.schema_found is None:
                self.schema_found = found
                event(log, "records.database", instance=self.instance, schema_found=found)
            self._db = db
        return self._db

    def _run(self, sql: str, args: tuple):
        with self._lock:
            try:
                return self._connection().execute(sql.replace("?", "%s"), args)
            except (psycopg.OperationalError, psycopg.InterfaceError) as exc:
                if self._db is not None:
                    self._db.close()  # the next operation connects again
                raise StoreUnavailable(str(exc).strip()[:200]) from exc

    def execute(self, sql: str, args: tuple) -> int:
        return self._run(sql, args).rowcount

    def fetch(self, sql: str, args: tuple) -> list:
        return self._run(sql, args).fetchall()

    def close(self) -> None:
        with self._lock:
            if self._db is not None:
                self._db.close()
