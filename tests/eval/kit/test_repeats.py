"""The scripted caller's answer to a confirmation, judged from the case alone (pure)."""

from agent.knowledge.chunking import Chunk
from eval.kit.cases import Case
from eval.kit.repeats import NO, YES, about, reaction, reply_to_confirmation

CHUNKS = [Chunk("a", "prices.md", 0, ("Prices", "Servicing and certificates"),
                "An annual boiler service costs $149. A power flush costs $420."),
          Chunk("b", "faq.txt", 0, ("Frequently asked questions",), "We install air source heat pumps.")]
FLUSH = Case("flush", "c1", "Do you do power flushes?", None, ("$420",), False)
AIRCON = Case("aircon", "c2", "Do you install air conditioning units?", None, (), True)


def test_the_caller_says_yes_to_the_heading_or_the_words_of_the_passage_holding_the_answer():
    subject = about(FLUSH, CHUNKS)
    assert reply_to_confirmation("Servicing and certificates", subject) == YES
    assert reply_to_confirmation("the power flush", subject) == YES


def test_the_caller_says_no_to_another_topic_even_from_the_same_passage():
    assert reply_to_confirmation("air source heat pumps", about(FLUSH, CHUNKS)) == NO
    assert reply_to_confirmation("the annual boiler service", about(FLUSH, CHUNKS)) == NO


def test_an_out_of_kb_question_gets_a_yes_only_for_the_callers_own_words():
    subject = about(AIRCON, CHUNKS)
    assert reply_to_confirmation("air source heat pumps", subject) == NO
    assert reply_to_confirmation("air conditioning", subject) == YES


def test_a_topic_with_no_content_words_gets_a_no():
    assert reply_to_confirmation("the", about(FLUSH, CHUNKS)) == NO


def test_the_caller_hears_what_the_agent_asked_and_answers_it():
    subject = about(FLUSH, CHUNKS)
    assert reaction("Sorry, I didn't catch that. Could you say it again?", subject) == "repeat"
    assert reaction("Sorry, my mistake. Could you say your question again?", subject) == "repeat"
    assert reaction("Are you asking about the power flush?", subject) == YES
    assert reaction("Are you asking about air source heat pumps?", subject) == NO
    assert reaction("A power flush of the heating system costs $420.", subject) is None
    assert reaction("Are you asking about that?", subject) == "repeat"  # the topic lost on the line
    assert reaction("Sorry, I don't have information about that.", subject) is None


def test_a_faq_question_is_about_its_whole_section():
    sections = [Chunk("q", "faq.md", 0, ("FAQ", "Can I compress a tar file?"), "Yes. Pipe tar into xz, or use tar -J."),
                Chunk("r", "faq.md", 1, ("FAQ", "Is xz faster than gzip?"), "No, gzip is faster.")]
    tar = Case("tar", "c3", "Can I compress a tar file?", None, (), False, expect_heading="Can I compress a tar file?")
    assert reply_to_confirmation("Pipe tar into xz", about(tar, sections)) == YES
    assert reply_to_confirmation("gzip", about(tar, sections)) == NO
