"""Answer audio rendered ahead: on disk by voice and text, used by the voice, pruned with the KB."""

import threading

import numpy as np

from agent.call.speaking.prerender import answer_texts, plan
from agent.call.speaking.speech_cache import SpeechCache
from agent.call.speaking.voice import Voice
from agent.knowledge.speakable import speakable
from agent.sip.port import BRIDGE_RATE
from tests.knowledge.conftest import make_index


def test_a_sentence_is_stored_and_read_back_exactly_and_lookups_are_counted(tmp_path):
    lookups = []
    cache = SpeechCache(tmp_path, "voice-a@16000Hz", lookups.append)
    pcm = (np.arange(-3000, 3000, 7)).astype(np.int16)
    assert cache.get("We do not accept cheques.") is None
    cache.put("We do not accept cheques.", pcm)
    assert np.array_equal(cache.get("We do not accept cheques."), pcm)
    assert lookups == [False, True]


def test_each_voice_has_its_own_folder_so_a_new_voice_never_plays_old_audio(tmp_path):
    assert SpeechCache(tmp_path, "voice-a").folder != SpeechCache(tmp_path, "voice-b").folder


def test_sentences_that_left_the_kb_are_deleted_and_half_written_files_cleaned_up(tmp_path):
    cache = SpeechCache(tmp_path, "voice-a")
    for text in ("kept", "gone"):
        cache.put(text, np.zeros(10, np.int16))
    (cache.folder / "crash.part").write_bytes(b"half")
    assert cache.keep_only({"kept"}) == 1
    assert cache.has("kept") and not cache.has("gone") and not list(cache.folder.glob("*.part"))


def test_the_voice_synthesises_a_sentence_once_then_reads_it_and_never_keeps_a_cut_one(models, tmp_path):
    voice = Voice(models.synthesizer, BRIDGE_RATE, tmp_path)
    first = voice.speak("Our office is open from 8 a.m. to 6 p.m.")
    assert voice.cache.has("Our office is open from 8 a.m. to 6 p.m.")
    assert np.array_equal(voice.speak("Our office is open from 8 a.m. to 6 p.m."), first)
    cancelled = threading.Event()
    cancelled.set()
    voice.speak("A sentence the caller talked over.", cancelled)
    assert not voice.cache.has("A sentence the caller talked over.")


def test_every_kb_sentence_is_planned_once_and_rendering_empties_the_plan(models, bundled_kb, tmp_path):
    voice = Voice(models.synthesizer, BRIDGE_RATE, tmp_path)
    snapshot = bundled_kb.index.snapshot
    texts = answer_texts(snapshot)
    assert speakable("We do not accept cheques.") in texts and len(texts) > 50
    missing = plan(voice, [snapshot])
    assert sorted(texts) == missing
    voice.cache.put("a sentence no chunk holds any more", np.zeros(10, np.int16))
    for text in missing[:3]:
        voice.render(text)
    assert len(plan(voice, [snapshot])) == len(missing) - 3
    assert not voice.cache.has("a sentence no chunk holds any more")


def test_a_list_is_planned_line_by_line_as_its_items_are_said(models, tmp_path):
    (tmp_path / "kb").mkdir()
    (tmp_path / "kb" / "prices.md").write_text("# Prices\n\nWeekly prices:\n- Small: £18 a week\n- Large: £52 a week\n")
    index = make_index(tmp_path / "kb", tmp_path / "index.sqlite3", models.embedder)
    assert index.refresh().ok
    texts = answer_texts(index.snapshot)
    assert {speakable("Weekly prices:"), speakable("Small: £18 a week"), speakable("Large: £52 a week")} < texts
