"""Where the fitted decision (answer.judge) is overruled, whatever the KB: rules a caller would expect that the
fitted weights have too few questions of the kind to learn. Pure, on the question, the chosen sentence and the
probability the decision gave it.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from agent.knowledge.features import NEGATIVE, weighted_words
from agent.knowledge.holds import holds, states_amount
from agent.knowledge.index import Snapshot
from agent.knowledge.question import Question
from agent.knowledge.text import tokens

if TYPE_CHECKING:
    from agent.knowledge.answer import Weights

SERVICES = frozenset(tokens("sell buy hire rent lend deliver repair fix mend install teach make build print stock run"))
"""Verbs for what a business does for its callers. One the KB never uses, in the caller's words or in the KB's for
them ("fix" said, "repair" written), names a service it does not speak of: "Do you sell dog food?" of kennels that
feed the dogs they board."""
_ANSWERED_BY = {"place": "address", "contact": "contact"}
"""What a sentence holds (holds.holds) that answers a question asking only for this kind, naming nothing else."""


def overrule(asked: Question, sentence: str, probability: float, snapshot: Snapshot, follow_up: bool,
             fitted: Weights, reworded: frozenset[str] | None = None) -> float:
    """The probability that `sentence` answers the question, after the rules. `reworded`: the tokens of the question
    in the KB's words (synonyms, words put back by sound), where it has any."""
    if not follow_up and any(token in SERVICES and snapshot.idf(token) is None
                             and (reworded is None or token in reworded) for token in asked.focus):
        probability = min(probability, fitted.confirming)
    if asked.amount and not states_amount(sentence):
        # "How much is a cat flu jab?" is not answered by "Every cat must be vaccinated against cat flu", and "It is
        # one week's rent" may yet answer "how much is the deposit?": confirmed, never said outright.
        probability = min(probability, fitted.confirming)
    if (not follow_up and not asked.focus and len(asked.kinds) == 1
            and _ANSWERED_BY.get(next(iter(asked.kinds))) in holds(sentence)):
        # "Where are you?", "What's your number?" name nothing to weigh the sentence by but the kind; a street
        # address, a phone number answers them.
        probability = max(probability, fitted.firm_from)
    if asked.polar and probability < fitted.abstain_below and NEGATIVE.search(sentence):
        # "Can I drop off some old tyres?": "We do not accept asbestos, gas bottles, tyres, ..." says no to the very
        # thing asked about, however little else of the question it shares; worth a confirmation, not a decline.
        rarest = _rarest_focus_word(asked, snapshot)
        if rarest is not None and rarest in tokens(sentence):
            probability = fitted.confirming
    return probability


def _rarest_focus_word(asked: Question, snapshot: Snapshot) -> str | None:
    words = [(token, weight) for token, weight in weighted_words(asked, snapshot) if token in asked.focus]
    return max(words, key=lambda word: word[1])[0] if words else None
