"""The owner's report of unanswered questions: grouped by meaning with the real embedder, most asked first."""

from agent.side.unanswered import UnansweredQuestion, group_by_meaning


def _asked(*texts):
    return [UnansweredQuestion(text, f"call{i % 4}", 1_700_000_000.0 + i * 3600,
                               "asked again" if i == 2 else "declined") for i, text in enumerate(texts)]


def test_questions_asking_the_same_thing_are_one_group_most_frequent_first(models):
    questions = _asked("Who is the chief executive of the company?", "Do you install air conditioning units?",
                       "What will the weather be like tomorrow?", "Do you do aircon installation?",
                       "Who runs the company?", "Do you install air conditioning units",
                       "Is it going to rain tomorrow?")
    groups = group_by_meaning(questions, models.embedder.embed([q.text for q in questions]))
    assert [g["count"] for g in groups] == [3, 2, 2]
    aircon = groups[0]
    assert aircon["question"] == "Do you install air conditioning units"  # most often asked wording, latest spelling
    assert aircon["variants"] == ["Do you install air conditioning units", "Do you do aircon installation?",
                                  "Do you install air conditioning units?"]
    assert aircon["calls"] == ["call1", "call3"] and aircon["declined"] == 3 and aircon["asked_again"] == 0
    assert aircon["first"] == "2023-11-14T23:13:20Z" and aircon["last"] == "2023-11-15T03:13:20Z"
    assert {g["question"] for g in groups[1:]} == {"Who runs the company?", "Is it going to rain tomorrow?"}


def test_different_questions_of_the_same_shape_stay_apart(models):
    questions = _asked("Do you install solar panels?", "Do you install air conditioning units?")
    assert len(group_by_meaning(questions, models.embedder.embed([q.text for q in questions]))) == 2


def test_nothing_asked_is_an_empty_report():
    import numpy as np
    assert group_by_meaning([], np.zeros((0, 384), dtype=np.float32)) == []
