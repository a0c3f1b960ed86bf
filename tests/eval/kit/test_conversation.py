from eval.kit.conversation import Conversation, Step


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


def test_an_answer_that_begins_late_is_waited_out_not_talked_over():
    # The answer to q0 begins 9 s after it and lasts 5 s: past a 12 s timeout, but it has begun.
    audible = lambda t: t < 10 or 475 <= t < 725  # noqa: E731
    conversation = Conversation([Step(10), Step(10)], quiet_ms=200, answer_timeout_ms=12_000)
    assert drive(conversation, audible, 800) == [(0, 20), (1, 735)]


def test_an_answer_that_never_ends_moves_the_caller_on_at_the_longest_wait():
    audible = lambda t: t < 10 or t >= 30  # noqa: E731 - hold music from tick 30 on
    conversation = Conversation([Step(10), Step(10)], quiet_ms=200, answer_timeout_ms=1000, longest_wait_ms=3000)
    assert drive(conversation, audible, 400) == [(0, 20), (1, 180)]


def test_a_reacting_caller_says_its_reply_to_an_answer_before_the_next_question():
    # Greeting 0-49; reply to q0 (a confirmation) 200-229; answer after the caller's yes 270-299; answer to q1.
    audible = lambda t: t < 50 or 200 <= t < 230 or 270 <= t < 300 or 400 <= t < 420  # noqa: E731
    asked = []

    def react(n):
        asked.append(n)
        return Step(20) if n == 0 else None  # says yes to the first reply only

    conversation = Conversation([Step(100), Step(50)], quiet_ms=200, answer_timeout_ms=10_000, react=react)
    assert drive(conversation, audible, 600) == [(0, 60), (1, 240), (2, 310)]
    assert asked == [0, 1, 2] and len(conversation.steps) == 3 and conversation.done
