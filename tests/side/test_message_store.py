"""Messages callers left, in the folder or in the shared database: each whole or not at all, listed newest first,
purged with the records."""

import io
import wave

import numpy as np

from agent.call.understanding.message import Message
from agent.side.messages import MessageStore


def _message(n: int, started: float) -> Message:
    return Message(f"{n:016x}", f"call{n}", "<sip:caller@127.0.0.1>", "200", started, 1.0, "silence")


def test_a_message_is_kept_as_wav_and_note_and_its_transcript_follows(message_store, tmp_path):
    store = message_store
    message = _message(1, 1000.0)
    store.save(message, np.arange(16000, dtype=np.int16))
    (listed,) = store.recent()
    assert listed["transcript"] is None and listed["audio"] == f"/messages/{message.id}.wav"
    store.transcribed(message, "Please call me back.")
    assert store.recent()[0]["transcript"] == "Please call me back."
    with wave.open(io.BytesIO(store.audio(message.id))) as wav:
        assert wav.getframerate() == 16000 and wav.getnframes() == 16000
    if isinstance(store, MessageStore):
        assert not list((tmp_path / "messages").glob(".*"))  # no temporary file left behind


def test_only_message_ids_name_messages(message_store):
    message_store.save(_message(1, 1000.0), np.zeros(10, dtype=np.int16))
    assert message_store.audio("../calls") is None and message_store.audio("0" * 15 + "2") is None


def test_newest_first_and_an_unreadable_note_is_skipped(tmp_path):
    store = MessageStore(tmp_path / "messages")
    for n, started in ((1, 1000.0), (2, 3000.0), (3, 2000.0)):
        store.save(_message(n, started), np.zeros(10, dtype=np.int16))
    (tmp_path / "messages" / f"{3:016x}.json").write_text("{not json")
    assert [m["call_id"] for m in store.recent()] == ["call2", "call1"]


def test_old_messages_are_purged_note_and_audio(message_store):
    store = message_store
    store.save(_message(1, 1000.0), np.zeros(10, dtype=np.int16))
    store.save(_message(2, 5000.0), np.zeros(10, dtype=np.int16))
    assert store.purge(older_than=2000.0) == 1
    assert [m["call_id"] for m in store.recent()] == ["call2"] and store.audio(f"{1:016x}") is None


def test_messages_are_listed_for_the_agent_asked_for(message_store):
    message_store.save(_message(1, 1000.0), np.zeros(10, dtype=np.int16))
    own = message_store.recent()[0]["instance"]
    assert len(message_store.recent(instance=own)) == 1 and message_store.recent(instance="elsewhere") == []
