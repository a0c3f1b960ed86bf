"""A question taken through the agent's own decisions with perfect hearing (the many-KB text path)."""

from eval.kit.cases import Case
from eval.kit.dialogue import Calls, ask, perfectly, verdict


def _case(say: str, expect: tuple[str, ...] = ()) -> Case:
    return Case(say[:10], "c1", say, None, expect, not expect)


def test_a_clear_question_the_kb_answers_is_answered_at_once(bundled_kb):
    case = _case("What are your opening hours during the week?", ("8 a.m. to 6 p.m.",))
    exchanges, answer = ask(Calls(bundled_kb), case, perfectly)
    assert [e["outcome"] for e in exchanges] == ["answered"]
    assert verdict(case, exchanges, answer)["first_try"]


def test_a_question_the_kb_does_not_cover_ends_in_a_decline_never_an_answer(bundled_kb):
    case = _case("Can I order a pizza?")
    exchanges, answer = ask(Calls(bundled_kb), case, perfectly)
    judged = verdict(case, exchanges, answer)
    assert judged["correct"] and not judged["wrong_answer"]
