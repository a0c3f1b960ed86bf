"""Near-homophones of KB words: recovered beside the transcript, and real words the KB lacks left alone."""

from agent.knowledge.soundalike import SoundAlikes

LEXICON = frozenset("do you pensioners get any discount can i spread the cost come out to cast how much solar panels "
                    "install on my roof work what number ring reach office boilers".split())
KB = ["Pensioners get a 10 percent discount on repairs.", "We cover Castleton and Dunmore.",
      "We service Vaillant boilers.", "You can spread the cost over 12 months."]


def recover(question: str) -> str:
    return SoundAlikes.from_texts(KB, LEXICON).recover(question)


def test_a_misheard_word_is_replaced_by_the_kb_word_it_sounds_like():
    assert recover("Do pensioners get any despunt?") == "Do pensioners get any discount"
    assert recover("Do you service Vaillant Boylers?") == "Do you service Vaillant boilers"


def test_a_word_the_kb_uses_is_left_as_heard_though_it_is_no_english_word():
    assert SoundAlikes.from_texts(["An MOT takes a minute on Mondays."], LEXICON).recover("How much is an MOT?") == ""


def test_of_kb_words_that_sound_equally_alike_the_same_one_is_put_back_whatever_order_the_kb_gives_them():
    picks = {SoundAlikes(order, LEXICON).recover("Do you service bvilers?")
             for order in (["bailers", "boilers"], ["boilers", "bailers"])}
    assert picks == {"Do you service bailers"}


def test_a_kb_name_heard_as_several_words_is_put_back_together():
    assert recover("Do you come out to cast the Lichon?") == "Do you come out to castleton"


def test_questions_in_real_words_are_left_as_heard():
    assert recover("How much do solar panels cost to install on my roof?") == ""  # solar is a word, not a KB one
    assert recover("Can I spread the cost?") == ""


def test_without_a_lexicon_nothing_is_recovered():
    assert SoundAlikes.from_texts(KB, frozenset()).recover("Do pensioners get any despunt?") == ""


GAS_KB = ["If you smell gas, leave the building straight away.", "On Saturdays the office is open until noon."]


def guess(question: str) -> tuple[str, tuple[str, ...]]:
    return SoundAlikes.from_texts(GAS_KB, LEXICON).guess(question)


def test_a_guess_puts_a_kb_word_in_place_of_a_real_word_that_sounds_like_it():
    assert guess("I think I can smell grass in my kitchen.") == ("I think I can smell gas in my kitchen", ("gas",))


def test_a_guess_leaves_words_the_kb_uses_in_any_form_and_words_like_no_kb_word():
    assert guess("Are you open on a Saturday?") == ("", ())  # the KB says "Saturdays"
    assert guess("Can I order a pizza?") == ("", ())
