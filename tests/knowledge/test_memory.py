import pytest

from agent.knowledge.memory import CallMemory, Turn, is_follow_up


@pytest.mark.parametrize("question", ["How much is it?", "And on Saturday?", "When does it run?",
                                      "Can I cancel it whenever I want?", "Saturday?", "And the full one?",
                                      "Where is it?", "How much?", "Is there one?", "Is it free?"])
def test_questions_that_name_too_little_of_their_own_are_follow_ups(question):
    assert is_follow_up(question)


@pytest.mark.parametrize("question", ["What are your opening hours on weekdays?", "How much is the Warm Care plan?",
                                      "What about oil furnaces?", "And what about adults on the NHS?",
                                      "Is there a deposit?", "Do you do refunds?"])
def test_questions_with_their_own_content_words_stand_on_them(question):
    assert not is_follow_up(question)


@pytest.mark.parametrize("question", ["What's your number?", "Where are you?", "When are you open?"])
def test_a_question_about_the_business_itself_is_no_follow_up_though_it_names_nothing(question):
    assert not is_follow_up(question)


def test_memory_keeps_at_most_max_turns():
    memory = CallMemory(max_turns=2, max_chars=10_000)
    for i in range(5):
        memory.add(Turn(f"question {i}", f"answer {i}"))
    assert [t.question for t in memory.turns] == ["question 3", "question 4"]


def test_memory_keeps_at_most_max_chars():
    memory = CallMemory(max_turns=10, max_chars=100)
    for i in range(5):
        memory.add(Turn(f"question {i} " + "x" * 20, "answer " + "y" * 20))
    assert sum(len(t.question) + len(t.answer) for t in memory.turns) <= 100
    assert memory.turns[-1].question.startswith("question 4")


def test_zero_turns_remembers_nothing():
    memory = CallMemory(max_turns=0)
    memory.add(Turn("q", "a"))
    assert memory.query("and then?").context == ""


def test_a_follow_up_carries_the_previous_answer_and_its_topic_not_the_words_heard():
    memory = CallMemory()
    memory.add(Turn("What are your weak day ours?", "We open at 8.", "Contact > Office hours", ("c1",)))
    query = memory.query("And on Saturday?")
    assert query.follow_up and query.topic == "Contact > Office hours" and query.topic_chunks == ("c1",)
    assert query.expanded == "Contact > Office hours We open at 8. And on Saturday?"


def test_after_a_decline_the_context_is_the_question_asked():
    memory = CallMemory()
    memory.add(Turn("Do you fit solar panels?", "Sorry, I don't have information about that."))
    assert memory.query("How much are they?").context == "Do you fit solar panels?"


def test_the_first_question_has_no_context():
    query = CallMemory().query("And on Saturday?")
    assert query.context == "" and query.expanded == "And on Saturday?"
