from eval.conversation import Conversation, Step


def drive(conversation, voiced_at, ticks):
    """Run the policy over `ticks`; voiced_at(tick) says when the agent is audible."""
    starts = []
    for tick in range(ticks):
        step = conversation.on_tick(tick, voiced_at(tick))
        if step is not None:
            starts.append((step, tick + 1))
    return starts


def test_questions_wait_for_the_greeting_and_each_answer_to_end():
    # Greeting ticks 0-49, answer to q0 ticks 200-299, answer to q1 ticks 420-449; quiet = 10 ticks.
    audible = lambda t: t < 50 or 200 <= t < 300 or 420 <= t < 450  # noqa: E731
    conversation = Conversation([Step(100), Step(50)], quiet_ms=200, answer_timeout_ms=10_000)
    assert drive(conversation, audible, 600) == [(0, 60), (1, 310)]
    assert conversation.done


def test_a_barge_in_step_starts_that_far_into_the_answer():
    audible = lambda t: t < 50 or 200 <= t < 400  # noqa: E731
    conversation = Conversation([Step(100), Step(30, barge_in_at_ms=600)], quiet_ms=200)
    assert drive(conversation, audible, 500) == [(0, 60), (1, 231)]


def test_a_missing_answer_times_out():
    audible = lambda t: t < 10  # noqa: E731 - greeting only, then silence
    conversation = Conversation([Step(10), Step(10)], quiet_ms=100, answer_timeout_ms=1000)
    starts = drive(conversation, audible, 200)
    assert starts == [(0, 15), (1, 75)]
