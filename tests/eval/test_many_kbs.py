"""The many-KB benchmark's data, its FAQ reader and its summary: every case can be answered as written, FAQs parse."""

import pytest

from eval.kit.cases import load_cases, right_answer
from eval.kit.faq_text import as_markdown, parse_debian_faq, parse_qa_faq
from eval.kit.kbs import KBS, faq_cases, halves
from eval.kit.scoring import contains_any
from eval.many_kbs import summarize

AUTHORED = [name for half in halves().values() for name in half if ":" not in name]


def test_the_halves_share_no_kb_and_each_has_every_writing_style():
    split = halves()
    assert not set(split["dev"]) & set(split["test"])
    assert len(AUTHORED) >= 8 and any(n.startswith("faq:") for n in split["test"])


@pytest.mark.parametrize("name", AUTHORED)
def test_every_expected_answer_is_in_its_kb_as_written(name):
    text = "\n".join(p.read_text() for p in sorted((KBS / name / "kb").glob("*.md")))
    cases = load_cases(KBS / name / "cases.jsonl")
    missing = [c.id for c in cases if c.expect_any and not any(contains_any(text, (e,)) for e in c.expect_any)]
    assert not missing
    assert sum(c.expect_abstain for c in cases) >= 4 and all(c.kind for c in cases)


DEBIAN_TEXT = """Table of contents
    1.1. What is this FAQ?

Chapter 1. Definitions and overview

1.1. What is this FAQ?

    This document gives frequently asked questions.

    * one bullet
    * another

1.2. How does the Debian project fit in or compare with the Free
Software Foundation's GNU project?

    The Debian system builds on the ideals of free software.

1.2.1. A sub-section

    More of the same answer.
"""


def test_the_debian_faq_layout_gives_each_question_its_answer_wrapped_headings_joined():
    entries = parse_debian_faq(DEBIAN_TEXT)
    assert [e.question for e in entries] == ["What is this FAQ?", "How does the Debian project fit in or compare "
                                             "with the Free Software Foundation's GNU project?"]
    assert entries[0].answer == "This document gives frequently asked questions.\n\n- one bullet\n\n- another"
    assert entries[1].answer.endswith("More of the same answer.") and entries[1].chapter == "Definitions and overview"


def test_a_q_and_a_faq_becomes_one_section_a_question():
    entries = parse_qa_faq("XZ FAQ\n\nQ:  What do the letters\n    XZ mean?\n\n"
                           "A:  Nothing. They are\n    two letters.\n")
    assert [(e.question, e.answer) for e in entries] == [("What do the letters XZ mean?",
                                                          "Nothing. They are two letters.")]
    assert "## What do the letters XZ mean?\n\nNothing." in as_markdown("XZ FAQ", entries)


def test_a_faq_question_is_answered_by_its_own_section_and_other_faqs_are_out_of_kb():
    own, other = parse_qa_faq("Q:  Is it free?\n\nA:  Yes.\n"), parse_qa_faq("Q:  Does it fly?\n\nA:  No.\n")
    cases = faq_cases("x", own, other)
    assert [(c.say, c.expect_abstain) for c in cases] == [("Is it free?", False), ("Does it fly?", True)]
    assert right_answer(cases[0], "Yes.", ["XZ FAQ > Is it free?"])
    assert not right_answer(cases[0], "Yes.", ["XZ FAQ > Does it fly?"])


def test_a_call_sample_spreads_over_the_file_to_its_end_and_keeps_each_call_whole():
    from eval.kit.cases import Case
    from eval.many_kbs import sample_calls

    cases = [Case(f"q{n}", f"c{n // 2}", "Hello?", None, ("x",), False) for n in range(12)]
    sample = sample_calls(cases, 3)  # six calls: the first, the middle one and the last (out-of-KB ones come last)
    assert [c.call for c in sample] == ["c0", "c0", "c2", "c2", "c5", "c5"]


def test_caller_voices_name_their_synthesizer():
    from eval.kit.voices import parse

    assert parse("espeak:en-gb+m3") == ("espeak", "en-gb+m3") and parse("slt") == ("flite", "slt")
    assert parse("piper") == ("piper", "")
    with pytest.raises(ValueError, match="ENGINE:NAME"):
        parse("festival:kal")


def test_the_summary_measures_how_long_the_right_answers_are_to_listen_to():
    rows = [{"out_of_kb": False, "correct": True, "first_try": True, "wrong_answer": False, "answer": "one two"},
            {"out_of_kb": False, "correct": False, "first_try": False, "wrong_answer": True, "answer": "a " * 50},
            {"out_of_kb": True, "correct": True, "first_try": True, "wrong_answer": False, "answer": "no idea at all"}]
    summary = summarize(rows)
    assert summary["right_answer_words_p50"] == summary["right_answer_words_p90"] == 2
