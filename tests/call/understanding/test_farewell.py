"""A goodbye is told apart from a question that contains goodbye words."""

import pytest

from agent.call.understanding.farewell import is_farewell


@pytest.mark.parametrize("said", ["Goodbye.", "That's all, thanks.", "No, that's it. Bye!", "OK, thank you, bye bye.",
                                  "That is everything, thanks very much.", "Great, have a nice day.",
                                  "Thanks for your help, goodbye."])
def test_farewells_end_the_call(said):
    assert is_farewell(said)


@pytest.mark.parametrize("said", ["What are your opening hours?", "Is that all included in the price?",
                                  "Bye the way, do you fix Vaillant boilers?", "",
                                  "That's all very well but when can you come and fix the boiler today?",
                                  "Thank you."])
def test_questions_and_plain_thanks_do_not(said):
    assert not is_farewell(said)
