"""A call's limits, tick by tick: no call, no clock, no SIP."""

from agent.call.limits import CallLimits, LimitAction, Verdict

NONE = Verdict(LimitAction.NONE)


def run(limits: CallLimits, until: float, step: float = 0.5, **observed) -> list[tuple[float, Verdict]]:
    """Check every `step` seconds up to `until`; the verdicts that asked for something."""
    out, now = [], 0.0
    packets = 0
    while now < until:
        now += step
        packets += 1 if observed.get("rtp_flowing", True) else 0
        verdict = limits.check(now, held=observed.get("held", False), agent_speaking=False,
                               last_caller_speech=observed.get("last_caller_speech", 0.0),
                               rtp_packets=None if observed.get("held") else packets)
        if verdict != NONE:
            out.append((now, verdict))
    return out


def test_a_silent_caller_is_asked_once_then_told_goodbye():
    events = run(CallLimits(0.0, inactivity_s=10, max_call_s=900, dead_call_s=30), until=21)
    assert events[0] == (10.5, Verdict(LimitAction.ASK_STILL_THERE))
    assert events[1] == (21.0, Verdict(LimitAction.GOODBYE, "caller silent"))


def test_a_line_with_no_rtp_is_hung_up_as_dead():
    events = run(CallLimits(0.0, inactivity_s=600, max_call_s=900, dead_call_s=5), until=10, rtp_flowing=False)
    assert events[0] == (6.0, Verdict(LimitAction.HANG_UP, "dead call (no RTP)"))


def test_a_silent_hold_longer_than_the_dead_call_limit_is_not_a_dead_call():
    assert run(CallLimits(0.0, inactivity_s=600, max_call_s=900, dead_call_s=5), until=60, held=True) == []


def test_the_maximum_length_applies_even_on_hold_without_a_goodbye_nobody_would_hear():
    events = run(CallLimits(0.0, inactivity_s=600, max_call_s=30, dead_call_s=5), until=40, held=True)
    assert events[0] == (30.5, Verdict(LimitAction.HANG_UP, "maximum call length"))


def test_after_a_hold_the_dead_call_clock_starts_again():
    limits = CallLimits(0.0, inactivity_s=600, max_call_s=900, dead_call_s=5)
    for t in range(1, 21):
        limits.check(float(t), held=True, agent_speaking=False, last_caller_speech=0.0, rtp_packets=None)
    # Unheld at 21 s with RTP stalled: dead only 5 s later, not at once.
    verdicts = [limits.check(float(t), held=False, agent_speaking=False, last_caller_speech=0.0, rtp_packets=7)
                for t in range(21, 28)]
    assert verdicts[:6] == [NONE] * 6 and verdicts[6] == Verdict(LimitAction.HANG_UP, "dead call (no RTP)")
