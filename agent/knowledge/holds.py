"""What a KB sentence holds, whatever the business: an amount of money in any currency, a time or a day, a
duration, a place, a way to get in touch, an age limit; which days of the week and months it speaks of, and whether
an age falls within a range it states. Pure, on one sentence's text.

These are what an answer to "how much", "when", "where", "who do I call" or "can my 12-year-old" must contain,
written the ways owners write them ("£4.20", "25p", "€14", "$89", "free of charge"; "9am", "8.30am", "09:00",
"noon"; "Tuesday to Saturday", "weekends"; "Unit 3, Canal Wharf", "LT4 7QE", "next to the fire station";
"01632 960 418", "555-0142"; "under-14s", "16 or over", "8 to 15").
"""

from __future__ import annotations

import re
from functools import lru_cache

from agent.knowledge.question import _DAYS, DAYS_IN, MONTHS, WEEKDAYS, WEEKEND, digits, months_named, unit
from agent.knowledge.text import sentences, tokens

_STREET_TYPES = ("road rd street st lane ln avenue ave way walk square approach place drive close park estate wharf "
                 "terrace hill row yard quay court gardens crescent parade arcade market green mews boulevard "
                 "blvd").split()
_STREET = "(?:" + "|".join(t.title() for t in _STREET_TYPES) + ")"
_NUMBERED_STREET = r"\b\d+[a-zA-Z]?,?\s+[A-Z][\w'-]*(?:\s+[A-Z][\w'-]*)?\s+" + _STREET
"""A house number and a street ("27 Harbour Road", "9 Abbey Walk"), its name capitalised as a name is: "£15 each
way" and "two minutes' walk" are no address. Matched on the sentence as written."""
_ZIP = r"\b\d{5}(?:-\d{4})?\b(?![ -]\d)"
"""A US ZIP code, not the area code that opens a phone number ("01632 960 418")."""
_AMOUNTS = (r"[£$€¥]\s?\d|\b\d+(?:\.\d+)?\s?(?:p|c)\b|\b\d+(?:\.\d+)?\s?(?:pounds?|dollars?|euros?|cents?|pence)\b|"
            r"\bfree\b|\bno (?:extra )?(?:charge|cost|fee)\b|\bat no (?:extra )?cost\b|\bhalf price\b|"
            r"\b\d+\s?(?:%|percent)|\b(?:a (?:third|quarter|fifth)|half|one third) off\b|"
            r"\b(?:do|does|will) not charge\b|\bsame price\b")
"""An amount of money, or that there is none to pay: what "how much is ..." needs. "money" below also holds "we
charge for ..." and "payment", which say that there is a price, not what it is."""
HOLDS = {
    "money": _AMOUNTS + r"|\bdiscount|\bsurcharge|\bnot refundable\b|\bno (?:minimum|fee)\b|\binterest free\b|"
                        r"\bcharged?\b|\bcosts?\b|\bprices?\b|\bfees?\b|\bextra\b|\bincluded\b|\bincludes\b|\bpaid\b|\bpayment\b",
    "time": r"\b\d{1,2}(?:[.:]\d{2})?\s?(?:am|pm|a\.m\.|p\.m\.)|\b\d{1,2}:\d{2}\b|\bnoon\b|\bmidnight\b|24/7|"
            r"\bclosed\b|\bopen\b|\buntil\b|\bmornings?\b|\bafternoons?\b|\bevenings?\b|\bweekends?\b|\bweekdays?\b|"
            r"\bdaily\b|\bevery (?:day|week|month)\b|\b(?:" + "|".join(_DAYS) + r")s?\b|\bjanuary|february|april|"
            r"june|july|august|september|october|november|december\b|\bholidays?\b|\bterm time\b|\bwhen\b|"
            r"\bbefore\b|\bafter\b|\bdue\b|\bas soon as\b",
    "duration": r"\b\d+(?:\.\d+)?\s?(?:-\s?)?(?:working |clear |full )?"
                r"(?:minutes?|mins?|hours?|hrs?|days?|weeks?|months?|years?)\b|\bwithin\b|"
                r"\bahead\b|\bnotice\b|\bovernight\b|\bwhile you wait\b|"
                r"\b(?:about|around|roughly|takes?|in|for|at least|up to) (?:a|an|half an?) "
                r"(?:minute|hour|day|week|fortnight|month|year)\b",
    "address": r"\bunit \d+\b|\b[a-z]{1,2}\d[a-z\d]?\s\d[a-z]{2}\b|" + _ZIP,
    "place": r"\bunit \d+\b|"
             r"\b[a-z]{1,2}\d[a-z\d]?\s\d[a-z]{2}\b|\bnext to\b|\bopposite\b|\bbehind\b|\bbeside\b|\babove\b|"
             r"\bnear(?:est)?\b|\bon the corner\b|\b(?:first|second|ground|top) floor\b|\bwalk\b|\bcar park\b|"
             r"\bentrance\b|\bgate\b|\bfoyer\b|\bstops? (?:right )?outside\b|\bmetres\b|\bmiles\b|"
             # where a thing is taken: "we deliver them straight to the funeral director"
             r"\b(?:deliver|take|send|bring|post|drop|collect)(?:s|ed|ing)?\b(?:\s+\w+){0,3}?\s+"
             r"(?:straight |directly |right )?(?:to|from) (?:the|your|our|their) \w+",
    "contact": r"\b\d{3,5}[ -]\d{3}[ -]\d{3,4}\b|\b\d{3}-\d{4}\b|\b\d-\d{3}-\d{3}-\d{4}\b|[\w.+-]+@[\w-]+\.[\w.]+|"
               r"\bwww\.|\.(?:com|org|net|example)\b",
    "quantity": r"\b\d+\b|\bup to\b|\bat most\b|\bat least\b",
    "distance": r"\b\d+(?:\.\d+)?\s?(?:metres|meters|m|miles?|km|kilometres|kilometers|yards)\b|"
                r"\b\d+[- ]minutes?'?\s(?:walk|drive)\b|\bnext door\b|\bround the corner\b|\bas far as\b",
    "age": r"\bunder[- ]?\d+s?\b|\bover[- ]?\d+s?\b|\baged? \d+|"
           r"\b\d+\s?(?:and|or)\s(?:over|under|older|above|younger)\b|"
           r"\b\d+\s?(?:to|-|–)\s?\d+\s?(?:years?|yrs?|months?)?\b|\bchild(?:ren)?\b|\bkids?\b|\bjuniors?\b|"
           r"\badults?\b|\bteen|\bbab(?:y|ies)\b|\bat least \d+ (?:weeks|months|years) old\b|\bminors?\b|\b\d+s\b",
}


_STREET_ADDRESS = re.compile(_NUMBERED_STREET + r"\b")
_STREET_NAME = re.compile(_NUMBERED_STREET + r"\b|"
                          r"\b(?i:on|in|at|off|along|from|to)\s+(?:[A-Z][\w'-]*\s+){1,2}" + _STREET + r"\b")
"""A street's name: after its number, or capitalised after a preposition ("on Ferry Street")."""


@lru_cache(maxsize=4096)
def street_words(text: str) -> frozenset[str]:
    """Words a text uses only in the names of streets ("112 Station Approach", "on Ferry Street"), as tokens: there
    they name a street, not the station or the ferry a caller may ask about. Cached: a chunk's text is asked about
    for every sentence and reading of every question that retrieves it."""
    spans = [m.group() for m in _STREET_NAME.finditer(text)]
    if not spans:
        return frozenset()
    return frozenset(tokens(" ".join(spans))) - frozenset(tokens(_STREET_NAME.sub(" ", text)))


_NAME = re.compile(r"(?<=[\w,;]\s)[A-Z][a-z]+(?:\s+[A-Z][a-z]+)*\b")
"""Capitalised words inside a sentence, not its first: names ("Marston", "Little Hayfield", "the Swan")."""
_OPENING_NAME = re.compile(r"^(?:[A-Z][\w'-]*\s+)+")
"""The capitalised words a sentence opens with: its first word, or the business's name ("Willowbank Boat Hire is")."""


@lru_cache(maxsize=4096)
def place_names(text: str) -> frozenset[str]:
    """Words a text uses only in the names its address sentences give ("between Marston and Little Hayfield ... MH6
    2QL"), as tokens: the towns and landmarks that say where the business is, not the bus from Marston a caller may
    ask about."""
    lines = sentences(text)
    is_address = [("address" in holds(line)) for line in lines]
    named = [name for line, address in zip(lines, is_address, strict=True) if address
             for name in _NAME.findall(_OPENING_NAME.sub("", line))]
    if not named:
        return frozenset()
    rest = [line for line, address in zip(lines, is_address, strict=True) if not address]
    return frozenset(tokens(" ".join(named))) - frozenset(tokens(" ".join(rest)))


def holds(sentence: str) -> frozenset[str]:
    """The kinds of answer the sentence gives (see question.KINDS)."""
    text = digits(sentence)
    held = {kind for kind, pattern in HOLDS.items() if re.search(pattern, text)}
    if _STREET_ADDRESS.search(sentence):
        held |= {"address", "place"}
    elif _STREET_NAME.search(sentence):  # "on Mill Street": a place, though no address
        held.add("place")
    return frozenset(held)


def states_amount(sentence: str) -> bool:
    return bool(re.search(_AMOUNTS, digits(sentence)))


DAY_RANGE = re.compile(r"\b(mon|tue|wed|thu|fri|sat|sun)[a-z]*\.?\s*(?:to|-|–|—|until|through)\s*"
                       r"(mon|tue|wed|thu|fri|sat|sun)[a-z]*")
"""A range of days, lower case: "tuesday to saturday", "mon–fri"."""
_MONTH = r"(jan|feb|mar|apr|may|jun|jul|aug|sep|oct|nov|dec)(?:uary|ruary|ch|il|e|y|ust|t|tember|ober|ember)?"
_DATE = r"(?:\d{1,2}(?:st|nd|rd|th)?\s+)?"
MONTH_RANGE = re.compile(rf"\b{_DATE}(?:{_MONTH}|(easter))\b(?:\s+\d{{1,2}}(?:st|nd|rd|th)?)?\s*"
                         rf"(?:to|-|–|—|until|till|through)\s*(?:the (?:end|start|beginning|middle) of\s+)?"
                         rf"{_DATE}{_MONTH}\b")
"""A range of months, lower case: "april to september", "1 march to 31 october", "from easter to the end of october"
(Easter as April, the month it falls in most years)."""


def states_range(text: str) -> bool:
    """Whether the lower-case text states a range of days or of months."""
    return bool(DAY_RANGE.search(text) or MONTH_RANGE.search(text))


def _span(names: tuple[str, ...], start: int, end: int) -> list[str]:
    """From start to end inclusive, round the week's or the year's end ("October to March")."""
    return list(names[start:end + 1] if start <= end else names[start:] + names[:end + 1])


def days_covered(sentence: str) -> frozenset[str]:
    """The days of the week and the months the sentence speaks of: named ones, ranges ("Tuesday to Friday", "Mon–Fri",
    "April to September"), weekends, weekdays, every day, all year."""
    text = sentence.lower()
    short = {d[:3]: d for d in _DAYS}
    days = {d for d in _DAYS if re.search(rf"\b{d}s?\b", text)}
    for first, last in DAY_RANGE.findall(text):
        days.update(_span(_DAYS, _DAYS.index(short[first]), _DAYS.index(short[last])))
    days |= months_named(text)
    months = [m[:3] for m in MONTHS]
    for first, easter, last in MONTH_RANGE.findall(text):
        days.update(_span(MONTHS, months.index("apr" if easter else first), months.index(last)))
    if re.search(r"\ball (?:the )?year\b|\byear[- ]round\b|\bevery month\b", text):
        days |= set(MONTHS)
    if re.search(WEEKEND, text):
        days |= {"saturday", "sunday"}
    if re.search(WEEKDAYS, text):
        days |= set(_DAYS[:5])
    if re.search(r"\bevery day\b|\bdaily\b|\b7 days a week\b|\bseven days a week\b|24/7", text):
        days |= set(_DAYS)
    return frozenset(days)


def age_fits(sentence: str, age: int) -> float:
    """1 when the sentence states a range or limit that holds `age` ("8 to 15", "under 12", "16 and over"), 0.5 when
    it states an age limit that does not (the rule that answers "can my 14-year-old ..." with "16 or over"), else 0."""
    text = digits(sentence)
    stated = False
    # "8 to 15", "8-15", and "aged 16 and 17" (two ages named, not "16 and over").
    ranges = re.findall(r"\b(\d+)\s?(?:to|-|–)\s?(\d+)\s?(?:years?|yrs?)?\b|\baged? (\d+) (?:and|or) (\d+)\b", text)
    for low, high in ((a or c, b or d) for a, b, c, d in ranges):
        if int(low) < int(high) <= 120:
            stated = True
            if int(low) <= age <= int(high):
                return 1.0
    for limit in re.findall(r"\bunder[- ]?(\d+)s?\b|\byounger than (\d+)\b", text):
        stated = True
        if age < int(next(n for n in limit if n)):
            return 1.0
    for limit in re.findall(r"\b(\d+)\s?(?:and|or)\s(?:over|older|above)\b|\bover[- ]?(\d+)s?\b|"
                            r"\baged? (\d+)\b(?! (?:and|or) \d)", text):
        stated = True
        if age >= int(next(n for n in limit if n)):
            return 1.0
    return 0.5 if stated else 0.0


_LIMIT = re.compile(r"\b(within|up to|at most|no more than|not more than|max|under|fewer than|less than|more than|over|"
                    r"at least|(?:an? |the )?(?:minimum|maximum)(?: [a-z]+)? (?:of|is))\s+(\d+(?:\.\d+)?)\s?"
                    r"(?:working |clear |full )?([a-z]+)\b(?! old)")
"""A limit on a number of something: "within 5 miles", "at most 3 children", "a minimum membership of 12 months",
"the minimum stay is 2 nights"; not an age ("at least 8 weeks old": age_fits)."""
_LOWER = re.compile(r"(?:an? |the )?minimum\b|more than|over|at least")
_STRICT = frozenset({"under", "fewer than", "less than", "more than", "over"})
"""An upper limit holds a number up to it, a lower one ("at least", "more than") a number from it; the strict ones
("under", "more than") not the limit itself."""


def limit_fits(sentence: str, number: float, counted: str) -> float:
    """1 when the sentence states a limit on what the caller counts that holds their number ("up to 6 children" for
    four kids, "at least 14 days" for three weeks), 0.5 when it states one that does not ("within five miles" for
    eight: the rule that answers "is that extra?"), else 0. Units of time are compared in days."""
    stated = False
    for bound, limit, word in _LIMIT.findall(digits(sentence)):
        theirs = unit(word)
        if theirs == counted:
            mine, limit_value = number, float(limit)
        elif theirs in DAYS_IN and counted in DAYS_IN:
            mine, limit_value = number * DAYS_IN[counted], float(limit) * DAYS_IN[theirs]
        else:
            continue
        stated = True
        beyond = mine - limit_value if _LOWER.match(bound) else limit_value - mine
        if beyond > 0 or (beyond == 0 and bound not in _STRICT):
            return 1.0
    return 0.5 if stated else 0.0
