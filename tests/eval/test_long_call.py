"""eval.long_call's memory figure: what the call still holds, not a reply caught in flight."""

from eval.long_call import summarize

RECORD = {"started": 0.0, "ended": 600.0, "outcome": "caller hung up", "turns": []}


def test_growth_is_what_the_call_holds_after_it_against_the_level_between_turns_in_its_second_minute():
    samples = [(10.0 * i, 600.0) for i in range(1, 60)]
    samples[6] = (70.0, 650.0)  # a reply being made in the second minute
    samples[-1] = (590.0, 640.0)  # and one at the last sample
    report = summarize(RECORD, b"", samples, after_call=603.0, no_record=True)
    assert report["rss_growth_mib"] == 3.0 and report["rss_growth_at_last_sample_mib"] == 40.0
    assert report["target_met"]
