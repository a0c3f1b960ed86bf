"""Reading an OpenAI-compatible event stream: text, the end, and anything else refused."""

import pytest

from agent.llm.client import DONE, LlmError, event_text


def test_a_chunk_gives_its_text_and_the_done_marker_ends_the_stream():
    assert event_text('data: {"choices":[{"index":0,"delta":{"content":"Yes, "}}]}') == "Yes, "
    assert event_text("data: [DONE]") is DONE


@pytest.mark.parametrize("line", ["", ": keep-alive", "event: message",
                                  'data: {"choices":[{"delta":{"role":"assistant","content":null}}]}',
                                  'data: {"choices":[],"usage":{"total_tokens":9}}'])
def test_lines_without_text_give_nothing(line):
    assert event_text(line) is None


@pytest.mark.parametrize("line", ["<html>Bad gateway</html>", "data: {not json", 'data: {"error":{"message":"boom"}}',
                                  'data: {"object":"chat.completion.chunk"}', 'data: ["a"]',
                                  'data: {"choices":[{"delta":{"content":42}}]}'])
def test_anything_else_is_refused_as_not_a_chat_stream(line):
    with pytest.raises(LlmError):
        event_text(line)
