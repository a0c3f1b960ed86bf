"""eval.turn_taking' comparison of end-of-turn policies: what a policy waits on whole questions, and how often it
answers half of one, for each length of the caller's pause."""

from eval.turn_taking import policy_outcome


def test_a_cut_question_is_cut_off_when_the_pause_reaches_the_silence_the_policy_waits():
    outcome = policy_outcome(whole_waits=[224, 224, 512, 1216], cut_waits=[224, 512, 1216, 1216])
    assert outcome["whole_wait_mean_ms"] == 544
    # A 400 ms pause outlasts only the short wait; 600 and 800 ms outlast the default too; none the long one.
    assert (outcome["cut_off_at_400ms"], outcome["cut_off_at_600ms"], outcome["cut_off_at_800ms"]) == (0.25, 0.5, 0.5)


def test_the_fixed_hangover_cuts_off_every_pause_longer_than_itself():
    outcome = policy_outcome([512] * 3, [512] * 3)
    assert outcome["whole_wait_p95_ms"] == 512
    assert (outcome["cut_off_at_400ms"], outcome["cut_off_at_600ms"]) == (0.0, 1.0)
