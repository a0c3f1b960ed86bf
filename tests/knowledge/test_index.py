"""Incremental refresh: counts, persistence, fingerprints, atomic swap, failures that keep the old index."""

import sqlite3
import threading

import pytest

from tests.knowledge.conftest import make_index


def _write(kb, name, text):
    kb.mkdir(exist_ok=True)
    (kb / name).write_text(text)


def _three_docs(tmp_path):
    kb = tmp_path / "kb"
    _write(kb, "hours.md", "# Hours\n\nWe open at 8 a.m. on weekdays.\n")
    _write(kb, "prices.md", "# Prices\n\nA service costs $149.\n")
    _write(kb, "plan.md", "# Plan\n\nThe plan costs $12 a month.\n")
    return kb


def test_first_refresh_adds_every_document(tmp_path, embedder):
    index = make_index(_three_docs(tmp_path), tmp_path / "i.db", embedder)
    report = index.refresh()
    assert (report.added, report.changed, report.deleted, report.unchanged) == (3, 0, 0, 0)
    assert report.chunks == 3 and len(index.snapshot.chunks) == 3 and report.seconds > 0


def test_refresh_counts_added_changed_deleted_and_unchanged(tmp_path, embedder):
    kb = _three_docs(tmp_path)
    index = make_index(kb, tmp_path / "i.db", embedder)
    index.refresh()
    _write(kb, "hours.md", "# Hours\n\nWe open at 9 a.m. on weekdays.\n")
    (kb / "plan.md").unlink()
    _write(kb, "parking.md", "# Parking\n\nParking is free.\n")
    embedded_before = embedder.texts
    report = index.refresh()
    assert (report.added, report.changed, report.deleted, report.unchanged) == (1, 1, 1, 1)
    assert embedder.texts - embedded_before == 4  # two chunks, one sentence each: only new/changed text
    texts = {c.chunk.path: c.chunk.text for c in index.snapshot.chunks}
    assert texts == {"hours.md": "We open at 9 a.m. on weekdays.", "prices.md": "A service costs $149.",
                     "parking.md": "Parking is free."}


def test_a_restart_does_not_re_embed_an_unchanged_kb(tmp_path, embedder):
    kb = _three_docs(tmp_path)
    make_index(kb, tmp_path / "i.db", embedder).refresh()
    embedded = embedder.texts
    restarted = make_index(kb, tmp_path / "i.db", embedder)
    assert len(restarted.snapshot.chunks) == 3  # loaded from SQLite before any refresh
    report = restarted.refresh()
    assert (report.added, report.changed, report.unchanged) == (0, 0, 3) and embedder.texts == embedded


def test_a_new_fingerprint_re_embeds_everything(tmp_path, embedder):
    kb = _three_docs(tmp_path)
    make_index(kb, tmp_path / "i.db", embedder).refresh()
    for changed in (make_index(kb, tmp_path / "i.db", embedder, target=200),
                    make_index(kb, tmp_path / "i.db", embedder, target=200, model_identity="another-model")):
        assert changed.snapshot.chunks == ()  # stale vectors are never served
        report = changed.refresh()
        assert (report.added, report.changed, report.unchanged) == (0, 3, 0) and report.chunks == 3


def test_bad_files_are_rejected_while_the_rest_is_indexed(tmp_path, embedder):
    kb = _three_docs(tmp_path)
    (kb / "latin1.md").write_bytes("Caf\xe9".encode("latin-1"))
    _write(kb, "huge.md", "x " * 600)
    report = make_index(kb, tmp_path / "i.db", embedder, max_file_bytes=1000).refresh()
    assert report.ok and report.added == 3
    assert set(report.rejected) == {"latin1.md", "huge.md"}


def test_a_document_that_turns_bad_keeps_its_previous_version(tmp_path, embedder):
    kb = _three_docs(tmp_path)
    index = make_index(kb, tmp_path / "i.db", embedder)
    index.refresh()
    (kb / "plan.md").write_bytes(b"\xff\xfe broken")
    report = index.refresh()
    assert "previously indexed version is kept" in report.rejected["plan.md"] and report.deleted == 0
    assert "The plan costs $12 a month." in [c.chunk.text for c in index.snapshot.chunks]


def test_an_embedding_failure_keeps_the_previous_index(tmp_path, embedder):
    kb = _three_docs(tmp_path)
    index = make_index(kb, tmp_path / "i.db", embedder)
    index.refresh()
    before, stored = index.snapshot, index.store.document_hashes()
    _write(kb, "hours.md", "# Hours\n\nWe open at 10 a.m.\n")
    embedder.fail_with = RuntimeError("onnxruntime exploded")
    report = index.refresh()
    assert not report.ok and "onnxruntime exploded" in report.error
    assert index.snapshot is before and index.store.document_hashes() == stored


def test_a_full_disk_keeps_the_previous_index(tmp_path, embedder, monkeypatch):
    kb = _three_docs(tmp_path)
    index = make_index(kb, tmp_path / "i.db", embedder)
    index.refresh()
    before = index.snapshot
    _write(kb, "new.md", "# New\n\nSomething new.\n")

    def disk_full(*args, **kwargs):
        raise sqlite3.OperationalError("database or disk is full")

    monkeypatch.setattr(index.store, "apply", disk_full)
    report = index.refresh()
    assert report.error == "OperationalError: database or disk is full" and index.snapshot is before


def test_the_database_rolls_back_a_failed_transaction(tmp_path, embedder):
    """A write that fails after deleting a document's old rows leaves them in place: all or nothing."""
    from dataclasses import replace

    from agent.knowledge.scan import Document

    kb = _three_docs(tmp_path)
    index = make_index(kb, tmp_path / "i.db", embedder)
    index.refresh()
    stored = index.store.load()
    good = stored[0]
    broken = replace(good, vector=None)  # fails while the rows are being written
    document = Document(good.chunk.path, "changed", "0" * 64, 7)
    with pytest.raises(AttributeError):
        index.store.apply("another-fingerprint", [(document, [good, broken])], [])
    assert [c.chunk.id for c in index.store.load()] == [c.chunk.id for c in stored]
    assert index.store.fingerprint() == index.fingerprint


def test_readers_see_the_old_index_or_the_new_one_never_a_mixture(tmp_path, embedder):
    kb = tmp_path / "kb"
    for i in range(12):
        _write(kb, f"doc{i}.md", f"# Doc {i}\n\nVersion one of document {i}.\n")
    index = make_index(kb, tmp_path / "i.db", embedder)
    index.refresh()
    for i in range(12):
        _write(kb, f"doc{i}.md", f"# Doc {i}\n\nVersion two of document {i}.\n")
    seen, stop = set(), threading.Event()

    def read():
        while not stop.is_set():
            snapshot = index.snapshot
            versions = {c.chunk.text.split()[1] for c in snapshot.chunks}
            assert len(snapshot.chunks) == 12 == snapshot.vectors.shape[0]
            seen.add(frozenset(versions))

    readers = [threading.Thread(target=read) for _ in range(3)]
    for reader in readers:
        reader.start()
    report = index.refresh()
    stop.set()
    for reader in readers:
        reader.join()
    assert report.ok and report.changed == 12
    assert seen <= {frozenset({"one"}), frozenset({"two"})}


def test_one_refresh_at_a_time(tmp_path, embedder):
    from agent.knowledge.index import RefreshBusy

    index = make_index(_three_docs(tmp_path), tmp_path / "i.db", embedder)
    with index._lock:
        try:
            index.refresh(wait=False)
            raise AssertionError("expected RefreshBusy")
        except RefreshBusy:
            pass
    assert index.refresh(wait=False).ok


def test_the_refreshed_snapshot_matches_what_a_restart_would_load(tmp_path, embedder):
    kb = _three_docs(tmp_path)
    index = make_index(kb, tmp_path / "i.db", embedder)
    index.refresh()
    _write(kb, "a-first.md", "# A\n\nSorted before the others.\n")
    (kb / "prices.md").unlink()
    index.refresh()
    reloaded = make_index(kb, tmp_path / "i.db", embedder).snapshot
    assert [c.chunk.id for c in index.snapshot.chunks] == [c.chunk.id for c in reloaded.chunks]
    assert (index.snapshot.vectors == reloaded.vectors).all()


@pytest.mark.parametrize("mishap", ["missing", "emptied"])
def test_a_missing_or_emptied_kb_directory_never_wipes_the_index(tmp_path, embedder, mishap):
    import shutil

    kb = _three_docs(tmp_path)
    index = make_index(kb, tmp_path / "i.db", embedder)
    index.refresh()
    if mishap == "missing":
        shutil.rmtree(kb)  # an unmounted volume, a typo in AGENT_KB_DIR
    else:
        for path in kb.iterdir():
            path.unlink()
    report = index.refresh()
    assert not report.ok and "previous index (3 documents) is kept" in report.error
    assert len(index.snapshot.chunks) == 3 and index.problem == report.error
    reopened = make_index(kb, tmp_path / "i.db", embedder)  # and after a restart
    assert len(reopened.snapshot.chunks) == 3
    _three_docs(tmp_path)
    assert index.refresh().ok and index.problem is None  # back in line once the KB is back
