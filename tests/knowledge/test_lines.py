from agent.knowledge.lines import asked_lines
from agent.knowledge.question import analyse

CLUB = ("Monthly membership by direct debit:\nCats: £14.50 a month\nDogs up to 20 kg: £17 a month\n\n"
        "Membership includes:\nAnnual booster vaccination and a health check\nFlea and worm treatment all year")
HOURS = "Monday to Friday: 8am – 7pm\nSaturday: 9am – 12pm\nSunday and bank holidays: closed"
TABLE = "Ticket, Adult, Junior:\nDay entry, €14, €9\nShoe hire, €4, €3"


def _lines(sentence: str, question: str) -> list[str]:
    asked = analyse(question)
    words = set(asked.focus) | set(asked.scene)
    return asked_lines(sentence, asked, lambda line: len(words & line) / len(words) if words else 0.0)


def test_the_item_asked_about_is_said_under_the_line_that_introduces_it():
    assert _lines(CLUB, "How much is it for a cat?") == ["Monthly membership by direct debit:", "Cats: £14.50 a month"]


def test_a_table_row_is_said_under_the_column_names():
    assert _lines(TABLE, "Can I hire shoes?") == ["Ticket, Adult, Junior:", "Shoe hire, €4, €3"]


def test_a_question_no_item_names_keeps_the_items_with_the_kind_of_answer_asked_for():
    assert _lines(CLUB, "How much is membership for my pet?") == [
        "Monthly membership by direct debit:", "Cats: £14.50 a month", "Dogs up to 20 kg: £17 a month"]


def test_an_item_holding_too_little_of_the_question_is_not_said_alone():
    jabs = "Vaccinations:\nDog first course: £78\nRabbit combined vaccine: £45"
    assert _lines(jabs, "How much are puppy vaccines for a spaniel?") == jabs.split("\n")


def test_an_item_without_the_kind_of_answer_asked_for_is_not_said_alone():
    assert _lines(CLUB, "How much is the health check?") == CLUB.replace("\n\n", "\n").split("\n")


def test_a_line_introducing_a_list_is_not_said_before_the_prose_after_it():
    hours = "Day, Open:\nSaturday, 09:00\nSunday, 10:00\n\nLast entry is an hour before closing."
    assert _lines(hours, "When is the last entry?") == ["Last entry is an hour before closing."]


def test_a_day_asked_about_is_its_own_line():
    assert _lines(HOURS, "Are you open on Sundays?") == ["Sunday and bank holidays: closed"]


def test_a_question_that_sets_no_item_apart_gets_every_line():
    assert _lines(HOURS, "What are your opening hours?") == HOURS.split("\n")
    assert _lines("One line only, with no list.", "Can I hire shoes?") == ["One line only, with no list."]
