"""Messages callers left, in the shared PostgreSQL database (AGENT_DATABASE_URL): note and recording in one row,
so any agent of the line lists and plays every message, and none is lost with one agent's disk. The same
methods as the messages folder (side/messages.MessageStore), on the call-record store's connection."""

from __future__ import annotations

import json
from dataclasses import asdict

import numpy as np

from agent.call.understanding.message import Message
from agent.side.messages import wav_bytes
from agent.side.records_pg import PostgresCallStore


class PostgresMessageStore:
    def __init__(self, records: PostgresCallStore) -> None:
        self._db = records

    def save(self, message: Message, audio: np.ndarray) -> None:
        """Note and recording together (written again, as the record writer may retry, it lands once)."""
        self._db.execute("INSERT INTO messages (id, instance, started, note, audio) VALUES (?, ?, ?, ?, ?) "
                        "ON CONFLICT (id) DO UPDATE SET note = excluded.note, audio = excluded.audio",
                        (message.id, self._db.instance, message.started, json.dumps(asdict(message)),
                         wav_bytes(audio)))

    def transcribed(self, message: Message, transcript: str) -> None:
        note = json.dumps({**asdict(message), "transcript": transcript})
        self._db.execute("UPDATE messages SET note = ? WHERE id = ?", (note, message.id))

    def recent(self, limit: int = 100, instance: str | None = None) -> list[dict]:
        """Every agent's messages (or `instance`'s), newest first."""
        where, args = ("WHERE instance = ? ", (instance,)) if instance is not None else ("", ())
        rows = self._db.fetch(f"SELECT id, note, instance FROM messages {where}ORDER BY started DESC LIMIT ?",
                              (*args, limit))
        return [{**json.loads(r["note"]), "instance": r["instance"], "audio": f"/messages/{r['id']}.wav"} for r in rows]

    def purge(self, older_than: float) -> int:
        return self._db.execute("DELETE FROM messages WHERE started < ?", (older_than,))

    def audio(self, message_id: str) -> bytes | None:
        rows = self._db.fetch("SELECT audio FROM messages WHERE id = ?", (message_id,))
        return bytes(rows[0]["audio"]) if rows else None
