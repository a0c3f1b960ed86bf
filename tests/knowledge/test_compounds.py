"""Closed compounds split into the KB's words (pure)."""

from agent.knowledge.compounds import Compounds

LEXICON = frozenset("can we have a do you sell fire wood camp however how ever weekend week end sun screen".split())
KB = ["Open fires on the ground are not allowed; logs are £6 a bag.", "Quiet time starts at 10:30pm."]


def test_a_compound_no_english_word_is_split_where_one_half_is_the_kbs():
    compounds = Compounds(KB, LEXICON)
    assert compounds.split("Can we have a campfire?") == "Can we have a camp fire"
    assert compounds.split("Do you sell firewood?") == "Do you sell fire wood"


def test_english_words_and_compounds_the_kb_has_no_part_of_are_left_as_heard():
    compounds = Compounds(KB, LEXICON)
    assert compounds.split("However, is it open at the weekend?") == ""  # English words, though they split
    assert compounds.split("Do you sell sunscreen?") == ""  # neither "sun" nor "screen" is the KB's


def test_without_a_lexicon_nothing_is_split():
    assert Compounds(KB, frozenset()).split("Can we have a campfire?") == ""
