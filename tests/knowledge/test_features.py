"""What is measured of a KB sentence against a question, across the candidates of one question."""

import numpy as np

from agent.knowledge.features import BY_RANGE, SENTENCE, one_age_rule_a_section, ranges_only_where_no_day_is_named
from agent.knowledge.holds import age_fits

AGE = SENTENCE.index("age")
DAY, DAY_MISSED, COVERED = (SENTENCE.index(n) for n in ("day", "day_missed", "covered"))


def ages(sentences: list[str], age: int) -> np.ndarray:
    rows = np.zeros((len(sentences), len(SENTENCE)), dtype=np.float32)
    rows[:, AGE] = [age_fits(s, age) for s in sentences]
    return rows


def test_a_rule_for_other_ages_answers_nothing_where_its_section_has_one_that_holds_the_age():
    rows = ages(["Climbers aged 16 and 17 can climb without an adult.", "Under-8s can only climb in the kids' zone.",
                 "Whitening is only available to patients aged 18 and over."], 5)
    one_age_rule_a_section(["visiting", "visiting", "whitening"], rows)
    assert list(rows[:, AGE]) == [0.0, 1.0, 0.5]  # a section with no rule for a five-year-old keeps its own


def test_a_range_leaving_the_day_out_answers_only_where_no_sentence_on_the_same_thing_names_the_day():
    # "Is anyone in the office on a Saturday?": "On Saturdays the office ..." names it, "Monday to Friday" leaves it
    # out, and "The shop is closed on Saturdays" names it but is on something else.
    rows = np.zeros((3, len(SENTENCE)), dtype=np.float32)
    rows[:, DAY], rows[:, COVERED] = [1.0, BY_RANGE, 1.0], [0.5, 0.5, 0.0]
    ranges_only_where_no_day_is_named(rows)
    assert list(rows[:, DAY]) == [1.0, 0.0, 1.0] and list(rows[:, DAY_MISSED]) == [0.0, 1.0, 0.0]
    on_nothing = rows[[1, 2]].copy()
    on_nothing[0, DAY], on_nothing[0, DAY_MISSED] = BY_RANGE, 0.0
    ranges_only_where_no_day_is_named(on_nothing)
    assert on_nothing[0, DAY] == BY_RANGE and on_nothing[0, DAY_MISSED] == 0.0
