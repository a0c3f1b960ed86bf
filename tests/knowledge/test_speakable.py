import pytest

from agent.knowledge.speakable import speakable


@pytest.mark.parametrize(("text", "spoken"), [
    ("Open from 8 a.m. to 6 p.m.", "Open from 8 AM to 6 PM."),
    ("Open 9 a.m.–1 p.m. Saturday.", "Open 9 AM to 1 PM Saturday."),
    ("It costs $89.", "It costs 89 dollars."),
    ("From $2,800.", "From 2800 dollars."),
    ("Only $12.50 or $1.", "Only 12 dollars and 50 cents or 1 dollar."),
    ("A basic service is £45.", "A basic service is 45 pounds."),
    ("DVDs cost £1.50, then £1 a day.", "DVDs cost 1 pound 50, then 1 pound a day."),
    ("Over £1,000.", "Over 1000 pounds."),
    ("Shoe hire is €4.50, entry €14.", "Shoe hire is 4 euros 50, entry 14 euros."),
    ("Copies are 25p or £0.50 in colour.", "Copies are 25 pence or 50 pence in colour."),
    ("Call us 24/7.", "Call us twenty-four seven."),
    ("Use ORCHID-47 today.", "Use Orchid, four seven today."),
    ("Error E119 shows.", "Error E, one one nine shows."),
    ("Ring 555-0142.", "Ring five five five, zero one four two."),
    ("Ring 1-800-555-0199.", "Ring one, eight zero zero, five five five, zero one nine nine."),
    ("Ring 01632 960 744.", "Ring zero one six three two, nine six zero, seven four four."),
    ("Call +44 20 7946 0958.", "Call plus four four, two zero, seven nine four six, zero nine five eight."),
    ("We had 0 100 200 calls.", "We had 0 100 200 calls."),
    ("Email help@kestrel.example now.", "Email help at kestrel dot example now."),
    ("About 45 min & 10% off.", "About 45 minutes and 10 percent off."),
    ("Small (35 sq ft), a 20 sq m room.", "Small (35 square feet), a 20 square metres room."),
])
def test_rewrites(text, spoken):
    assert speakable(text) == spoken


def test_plain_sentences_are_unchanged():
    sentence = "The plan includes one annual boiler service every year."
    assert speakable(sentence) == sentence
