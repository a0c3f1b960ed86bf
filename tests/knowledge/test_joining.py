"""Which sentences are said together, on a real KB and the real embedder."""

from agent.knowledge.memory import CallMemory
from tests.knowledge.conftest import benchmark_kb


def test_an_answer_next_to_the_age_rule_for_the_callers_age_says_the_rule_too(models, tmp_path):
    knowledge = benchmark_kb("garage", tmp_path, models.embedder)
    reply = knowledge.draft(CallMemory(), "I'm 22, can I have a courtesy car?")
    assert "two courtesy cars" in reply.text and "over 25" in reply.text


def test_an_answer_stating_a_limit_the_caller_is_beyond_says_what_applies_beyond_it(models, tmp_path):
    knowledge = benchmark_kb("driving", tmp_path, models.embedder)
    beyond = knowledge.draft(CallMemory(), "I live eight miles out of town, is that extra?")
    assert "within five miles" in beyond.text and "Further out, we charge £5" in beyond.text
    within = knowledge.draft(CallMemory(), "I live three miles out of town, is that extra?")
    assert "within five miles" in within.text and "Further out" not in within.text


def test_an_answer_measured_by_the_sentence_before_it_says_that_sentence_too(models, tmp_path):
    knowledge = benchmark_kb("physio", tmp_path, models.embedder)
    reply = knowledge.draft(CallMemory(), "How much notice do you need if I cancel?")
    assert "at least 24 hours' notice" in reply.text and "less notice" in reply.text


def test_a_sentence_pointing_back_within_itself_is_said_alone(models, tmp_path):
    knowledge = benchmark_kb("yoga", tmp_path, models.embedder)
    reply = knowledge.draft(CallMemory(), "If I cancel two hours before, do I lose my class?")
    assert "up to 6 hours before" in reply.text and "Classes hold 12 people" not in reply.text  # "; later than that"


def test_what_is_so_after_what_is_not_joins_only_if_it_gives_the_kind_of_answer_asked(models, tmp_path):
    knowledge = benchmark_kb("tailor", tmp_path, models.embedder)
    memory = CallMemory()
    knowledge.compose(memory, "How much is a shirt?")
    reply = knowledge.draft(memory, "What's your number?")
    # "... you do not need an appointment." is followed by the price list, which gives no number to ring.
    assert reply.sentences == ("Call 01632 960 148 or just come in; you do not need an appointment.",)
