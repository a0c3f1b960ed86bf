"""Which sentences are said together, on a real KB and the real embedder."""

from agent.knowledge.base import KnowledgeBase
from agent.knowledge.memory import CallMemory
from tests.conftest import REPO
from tests.knowledge.conftest import make_index


def test_an_answer_stating_a_limit_the_caller_is_beyond_says_what_applies_beyond_it(models, tmp_path):
    index = make_index(REPO / "eval" / "kbs" / "driving" / "kb", tmp_path / "index.sqlite3", models.embedder)
    assert index.refresh().ok
    knowledge = KnowledgeBase(index, models.embedder)
    beyond = knowledge.draft(CallMemory(), "I live eight miles out of town, is that extra?")
    assert "within five miles" in beyond.text and "Further out, we charge £5" in beyond.text
    within = knowledge.draft(CallMemory(), "I live three miles out of town, is that extra?")
    assert "within five miles" in within.text and "Further out" not in within.text
