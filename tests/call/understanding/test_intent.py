"""What a caller's words ask for, before the knowledge base is asked."""

import pytest

from agent.call.understanding.intent import Intent, intent


@pytest.mark.parametrize("words, offered, expected", [
    ("No, that's all, thanks. Goodbye.", False, Intent.GOODBYE),
    ("I'd like to leave a message", False, Intent.MESSAGE),
    ("Yes please", True, Intent.MESSAGE),
    ("Yes please", False, Intent.QUESTION),
    ("Can I speak to someone?", False, Intent.PERSON),
    ("What are your opening hours?", False, Intent.QUESTION),
])
def test_what_the_caller_asks_for_comes_before_the_knowledge_base(words, offered, expected):
    assert intent(words, message_offered=offered) is expected
