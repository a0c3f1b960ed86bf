"""What is measured of a KB sentence against a question, across the candidates of one question."""

import numpy as np

from agent.knowledge.features import SENTENCE, one_age_rule_a_section
from agent.knowledge.holds import age_fits

AGE = SENTENCE.index("age")


def ages(sentences: list[str], age: int) -> np.ndarray:
    rows = np.zeros((len(sentences), len(SENTENCE)), dtype=np.float32)
    rows[:, AGE] = [age_fits(s, age) for s in sentences]
    return rows


def test_a_rule_for_other_ages_answers_nothing_where_its_section_has_one_that_holds_the_age():
    rows = ages(["Climbers aged 16 and 17 can climb without an adult.", "Under-8s can only climb in the kids' zone.",
                 "Whitening is only available to patients aged 18 and over."], 5)
    one_age_rule_a_section(["visiting", "visiting", "whitening"], rows)
    assert list(rows[:, AGE]) == [0.0, 1.0, 0.5]  # a section with no rule for a five-year-old keeps its own
