"""A re-index on one agent makes every agent on the same PostgreSQL database re-index (LISTEN/NOTIFY).

Agents of one line answer from the same files (a shared volume); an owner who changes them asks one agent to
re-index (POST /kb/reindex), and that agent announces it on the `agent_kb` channel. Every other agent listens on
a connection of its own, on a thread of its own, and re-indexes the profile named (its refresh only re-embeds
what changed). A listener that loses the database connects again and records this agent's index versions anew
(an agent that started with the database down is listed from then on); a re-index missed meanwhile is caught up
at the next one, or by re-indexing that agent.
"""

from __future__ import annotations

import json
import logging
import threading
from collections.abc import Callable

import psycopg

from agent.logs import event
from agent.threads import name_native

log = logging.getLogger(__name__)

CHANNEL = "agent_kb"
RECONNECT_S = 5.0


def announce(url: str, instance: str, profiles: list[str]) -> None:
    """Tell every other agent on the database that these profiles were re-indexed here."""
    with psycopg.connect(url, autocommit=True, connect_timeout=3) as db:
        db.execute("SELECT pg_notify(%s, %s)", (CHANNEL, json.dumps({"instance": instance, "profiles": profiles})))


def announced(payload: str, own: str) -> list[str]:
    """The profiles another agent re-indexed, from a notification's payload ([] for our own or a bad one)."""
    try:
        message = json.loads(payload)
        profiles = message["profiles"]
        if message["instance"] == own or not all(isinstance(p, str) for p in profiles):
            return []
        return list(profiles)
    except (ValueError, KeyError, TypeError):
        return []


class KbListener:
    """Calls `reindex(profiles)` on its thread whenever another agent announces a re-index, and `connected()`
    each time it reaches the database."""

    def __init__(self, url: str, instance: str, reindex: Callable[[list[str]], None],
                 connected: Callable[[], None] = lambda: None) -> None:
        self._url, self._instance, self._reindex, self._connected = url, instance, reindex, connected
        self._stop = threading.Event()
        self.listening = threading.Event()
        self._thread = threading.Thread(target=self._run, name="kb-sync", daemon=True)
        self._thread.start()

    def _run(self) -> None:
        name_native()
        while not self._stop.is_set():
            try:
                with psycopg.connect(self._url, autocommit=True, connect_timeout=3) as db:
                    db.execute(f"LISTEN {CHANNEL}")
                    self.listening.set()
                    self._connected()
                    while not self._stop.is_set():
                        for note in db.notifies(timeout=1.0):
                            profiles = announced(note.payload, self._instance)
                            if profiles:
                                event(log, "kb.sync", profiles=",".join(profiles))
                                self._reindex(profiles)
            except psycopg.Error as exc:
                self.listening.clear()
                event(log, "kb.sync_lost", logging.WARNING, error=type(exc).__name__)
                self._stop.wait(RECONNECT_S)
            except Exception:
                log.exception("kb.sync_failed")
                self._stop.wait(RECONNECT_S)

    def stop(self) -> None:
        self._stop.set()
        self._thread.join(timeout=5)


def share_reindexing(database_url: str, instance: str, store, knowledge: dict, state) -> KbListener | None:
    """Record each profile's index version in the call-record store; with a shared database (`database_url`),
    announce a re-index done here by agent `instance` (`state.reindexed`, called by POST /kb/reindex) and follow
    those done elsewhere. Returns the listener, or None without a database."""

    def record(profiles) -> None:
        for name in profiles:
            try:
                store.kb_indexed(name, knowledge[name].index.snapshot.version)
            except Exception as exc:  # a database that is down: /readyz shows the local version meanwhile
                event(log, "kb.version_unrecorded", logging.WARNING, profile=name, error=type(exc).__name__)

    record(list(knowledge))
    if not database_url:
        state.reindexed = record
        return None

    def reindexed_here(profiles) -> None:
        record(profiles)
        try:
            announce(database_url, instance, list(profiles))
        except Exception as exc:
            event(log, "kb.announce_failed", logging.WARNING, error=type(exc).__name__)

    def reindexed_elsewhere(profiles) -> None:
        known = [name for name in profiles if name in knowledge]
        for name in known:
            knowledge[name].index.refresh()
        record(known)

    state.reindexed = reindexed_here
    return KbListener(database_url, instance, reindexed_elsewhere,
                      connected=lambda: record(list(knowledge)))
