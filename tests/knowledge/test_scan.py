import os

from agent.knowledge.scan import scan


def _kb(tmp_path):
    kb = tmp_path / "kb"
    kb.mkdir()
    (kb / "good.md").write_text("# Hours\n\nWe open at 8.\n")
    return kb


def test_reads_markdown_and_text_recursively_and_ignores_other_files(tmp_path):
    kb = _kb(tmp_path)
    (kb / "sub").mkdir()
    (kb / "sub" / "faq.txt").write_text("Parking is free.\n")
    (kb / "image.png").write_bytes(b"\x89PNG")
    (kb / ".hidden.md").write_text("secret")
    result = scan(kb, 1 << 20, 1 << 30)
    assert sorted(result.documents) == ["good.md", "sub/faq.txt"] and result.rejected == {}


def test_non_utf8_is_rejected_with_a_reason(tmp_path):
    kb = _kb(tmp_path)
    (kb / "latin1.md").write_bytes("Caf\xe9 hours".encode("latin-1"))
    result = scan(kb, 1 << 20, 1 << 30)
    assert "not UTF-8" in result.rejected["latin1.md"] and "good.md" in result.documents


def test_oversized_and_empty_files_are_rejected(tmp_path):
    kb = _kb(tmp_path)
    (kb / "big.md").write_text("x" * 2000)
    (kb / "empty.md").write_text("  \n")
    result = scan(kb, 1000, 1 << 30)
    assert "over the 1000-byte limit" in result.rejected["big.md"]
    assert result.rejected["empty.md"] == "file is empty"


def test_symlink_escaping_the_kb_is_rejected_but_one_inside_is_read(tmp_path):
    kb = _kb(tmp_path)
    (tmp_path / "outside.md").write_text("private notes")
    os.symlink(tmp_path / "outside.md", kb / "escape.md")
    os.symlink(kb / "good.md", kb / "alias.md")
    result = scan(kb, 1 << 20, 1 << 30)
    assert "outside the KB directory" in result.rejected["escape.md"]
    assert result.documents["alias.md"].text == result.documents["good.md"].text


def test_total_size_is_bounded(tmp_path):
    kb = _kb(tmp_path)
    (kb / "more.md").write_text("y" * 100)
    result = scan(kb, 1 << 20, 50)
    assert "total" in result.rejected["more.md"] and "good.md" in result.documents


def test_missing_directory_is_reported(tmp_path):
    assert "does not exist" in scan(tmp_path / "nope", 1, 1).rejected["."]


def test_content_hash_identifies_the_bytes(tmp_path):
    kb = _kb(tmp_path)
    first = scan(kb, 1 << 20, 1 << 30).documents["good.md"].sha256
    (kb / "good.md").write_text("# Hours\n\nWe open at 9.\n")
    assert scan(kb, 1 << 20, 1 << 30).documents["good.md"].sha256 != first
