"""What a caller's question asks, from its words alone, whatever the business: the kinds of answer it wants (an
amount, a time, a place...), its focus (the content words that name what it is about), the circumstances it is
asked in, and the days and age it names. Pure; no KB needed.

A caller frames a question in words that say nothing about its subject ("can I get", "do I need to bring", "what
time"): those frame words and the words that say which kind of answer is wanted are kept out of the focus, so
that what is left is what an answer must be about. A clause that sets the scene ("I use a wheelchair, ...",
"... while I'm in the chair") is circumstance: it helps, but an answer need not be about it.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from agent.knowledge.text import content_words, specificity, tokens

OPENING_HOURS = (r"\b(?:are|is) (?:you|it|they|we|the [a-z]+) (?:open|closed|shut)\b|\bopen(?:ing)? (?:hours|times)\b|"
                 r"\b(?:open|close|closed|shut|closing)\b(?= on\b| at\b| in the\b| during\b| over\b|\s*\?|$)|"
                 r"\bwhat time (?:do|does|are|is)\b")
"""An opening-hours question: "are you open on Sundays?", "what time do you close?" (not "how do I open the valve?")."""
_OPEN_WORDS = frozenset({"open", "close", "closed", "shut", "closing", "opening"})

KINDS = {
    "money": r"\bhow much\b|\bcosts?\b|\bprices?\b|\bpriced\b|\bcharges?\b|\bfees?\b|\bpay\b|\bpaying\b|"
             r"\bexpensive\b|\bcheap(?:er|est)?\b|\bafford\b|\bfree\b|\bdiscounts?\b|\bmoney off\b",
    "time": r"^\s*(?:and\s+)?when\b|\bwhat time\b|\bwhat times\b|\bhours\b|\blatest\b|\bearliest\b|"
            r"\bhow (?:late|early|soon|quickly)\b|\bwhich (?:days?|evenings?)\b|" + OPENING_HOURS,
    "duration": r"\bhow long\b|\bhow many (?:days|hours|minutes|weeks|months)\b|\bnotice\b|"
                r"\bhow (?:soon|quickly|fast)\b|\bsoonest\b|\bearliest\b|\blatest\b|\bfirst available\b",
    "place": r"^\s*(?:and\s+)?where\b|\bwhereabouts\b|(?<!email )(?<!e-mail )(?<!web )\baddress\b|\blocated\b|"
             r"\blocation\b|\bwhich (?:door|entrance|floor|building)\b|\bpark\b|\bparking\b",
    "contact": r"\bnumber\b|\bwho (?:do|should|can) i (?:call|ring|phone|contact|speak to)\b|"
               r"\be-?mail address\b|\bweb address\b|"
               r"\bhow (?:do|can) i (?:contact|reach|get hold of|get in touch)\b|\bget in touch\b",
    "quantity": r"\bhow many\b",
    "distance": r"\bhow far\b|\bhow close\b|\bdistance\b",
    "age": r"\b\d+[ -]?(?:year|yr|month|week)s?[ -]?old\b|\bage[ds]?\b|\btoo (?:old|young)\b|\bold enough\b",
}
"""What a question asks for, by its words (numbers already digits: "ten year old" is "10 year old")."""
_AMOUNT = re.compile(r"^\s*(?:and\s+|so\s+)?(?:how much\b(?! (?:notice|time|longer|warning|sooner|space|room)\b)|"
                     r"how expensive\b|what (?:does|do|will|would|did) .*\b(?:cost|charge)\b|"
                     r"what(?:'s| is| are) the (?:price|cost|charge|fee)s?\b)")
"""A question that asks for an amount of money outright ("how much is ...", "what does ... cost?"), not one that
asks whether something costs ("is it free?", "do I pay extra?") or how to pay."""

_POLAR = re.compile(r"^\s*(?:and\s+|so\s+|but\s+)?(?:do|does|did|can|could|may|might|will|would|shall|should|must|"
                    r"is|are|was|were|am|have|has|had|isn't|aren't|don't|doesn't|can't|won't)\b", re.IGNORECASE)
_OPENER = re.compile(r"^\s*(?:and\s+|so\s+|but\s+)?(?:what|what's|when|where|which|who|whom|whose|why|how|do|does|"
                     r"did|can|could|may|will|would|shall|should|must|is|are|am|have|has|isn't|aren't|don't|"
                     r"doesn't|can't|won't)\b", re.IGNORECASE)
_SUBORDINATE = (r"(?:while|because|since|though|although|whilst|unless)\b|"
                r"(?:if|when|after|before|as)\s+(?:i|we|he|she|they|my|our|it|you)\b")
_SCENE = re.compile(rf",|;|\s(?={_SUBORDINATE})", re.IGNORECASE)
_SUBORDINATE_CLAUSE = re.compile(_SUBORDINATE, re.IGNORECASE)

FRAME = frozenset(tokens("""
need needs want wants wanted like get gets getting got go going come coming bring take use know tell ask find let send
able possible allowed allow okay ok please thank thanks just still also really actually usually normally
currently right now anything something someone somebody anyone anybody thing things way kind sort lot bit info
information question hello hi yes yeah sure exactly much many long late early time times day days number
hour hours happen happens happened moment think problem problems whenever wherever whatever worry mind wonder
wondering
possibly maybe perhaps soonest quickest mean means
cost costs price prices charge charges fee fees pay paying expensive cheap afford whereabouts address located
based situated location far latest earliest soon quickly ring call phone email contact touch
month months week weeks do does doing back
"""))
"""Words that frame a question in any trade or name the kind of answer it wants: never what it is about."""
_PHONING = re.compile(r"\bphone\s+(?:number|no|call|calls|line|us|you|me|them|him|her|ahead|back|in|up)\b|"
                      r"\b(?:by|on|over|via)\s+(?:the\s+)?phone\b|"
                      r"\b(?:i|we|to|can|could|should|shall|will|please|you)\s+phone\b", re.IGNORECASE)
"""A phone as the way to get in touch ("Can I phone you?", "the phone number", "book over the phone"); elsewhere a
phone is a thing the question is about ("my cracked phone screen", "Do you fix phones?")."""

PREMISES = frozenset(tokens("shop store office studio practice surgery clinic salon library hall garage centre center "
                            "site school premises building branch workshop showroom"))
"""Words for the place a business works from: asked where, by itself, it is the business's address."""
WEEKEND, WEEKDAYS = r"\bweek ?ends?\b", r"\bweek ?days?\b|\b(?:in|during) the week\b"
"""The weekend and the weekdays, however written ("week day" is how Whisper writes "weekday" now and then)."""
_DAYS = ("monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday")
MONTHS = ("january", "february", "march", "april", "may", "june", "july", "august", "september", "october",
          "november", "december")
MONTH_NAMED = re.compile(r"\b(?:" + "|".join(m for m in MONTHS if m != "may") + r")\b|"
                         r"\b(?:in|of|during|from|until|till) may\b|\bmay \d|\d(?:st|nd|rd|th)? may\b")
"""A month, lower case; "may" only where it can be nothing else ("in May", "31 May"), not "May I ...?"."""
_AGE_WORDS = re.compile(r"\b\d+[ -]?(?:year|yr|month|week)s?[ -]?olds?\b|\bage[ds]?(?: \d+)?\b|\b(?:too )?(?:old|young)"
                        r"(?: enough)?\b")
_AGE = re.compile(r"\b(\d+)[ -]?(?:year|yr)s?[ -]?old\b|\baged? (\d+)\b|\b(\d+)[ -]?y(?:ea)?r[ -]?olds?\b")
_IS_AGE = re.compile(r"\b(?:i'?m|i am|(?:s?he|son|daughter|child|kid|boy|girl)(?:'s| is)|they(?:'re| are)|"
                     r"we(?:'re| are))\s+(\d{1,2})(?=\s*(?:[,.?!]|$|and\b))")
"""An age said in passing, as what someone is ("I'm 22, can I ...", "she's one"), not "I'm 5 minutes away": it names
the age without asking about ages, so "What about our baby, she's one?" still follows up a price."""
_COUNT = re.compile(r"\b(\d+(?:\.\d+)?|an?)\s+(?:more\s+|extra\s+|other\s+)?([a-z]+)\b")
_NOT_COUNTED = frozenset("at in on of and or to the a an am pm for with by is are s year years old o clock".split())
SAME_UNIT = {"kid": "child", "kilo": "kg", "kilogram": "kg", "mi": "mile"}
"""Words for one unit, as stems: "five kids" counts what "at most three children" limits."""
DAYS_IN = {"hour": 1 / 24, "day": 1.0, "week": 7.0, "fortnight": 14.0, "month": 30.0}
"""Units of time, in days: "a week before" against "at least 14 days before" (a night is a stay, not a span)."""
_NUMBERS = {w: str(i) for i, w in enumerate("zero one two three four five six seven eight nine ten eleven twelve "
                                            "thirteen fourteen fifteen sixteen seventeen eighteen nineteen twenty"
                                            .split())}
_TENS = {"twenty": 20, "thirty": 30, "forty": 40, "fifty": 50, "sixty": 60, "seventy": 70, "eighty": 80, "ninety": 90}


@dataclass(frozen=True)
class Question:
    """A caller's question, analysed."""

    text: str
    kinds: frozenset[str]
    """What kind of answer it wants ("money", "time", "duration", "place", "contact", "quantity", "distance", "age")."""
    focus: tuple[str, ...]
    """Content tokens (stemmed) of the asking clause, frame words aside: what an answer must be about."""
    scene: tuple[str, ...]
    """Content tokens of the clauses that set the scene, frame words aside."""
    days: frozenset[str]
    """Days of the week it names ("saturday"), weekend and weekday as their days, and months ("july"): when it asks
    about, which a sentence may cover by name or in a range ("Tuesday to Saturday", "1 March to 31 October")."""
    age: int | None
    """An age it names, in years ("my ten year old")."""
    polar: bool
    """A yes/no question ("do you ...", "can I ...", "is there ...")."""
    amount: bool = False
    """It asks for an amount of money outright: only a sentence that states one answers it."""
    counts: tuple[tuple[float, str], ...] = ()
    """Numbers it gives with what they count, as a unit's stem: (8, "mile") for "eight miles out", (5, "child") for
    "five kids", (1, "week") for "a week before"; an age is `age`, a time of day none."""
    specific: dict[str, float] = field(default_factory=dict, compare=False)
    """How much each focus and scene token names a subject (text.specificity of the word the caller used)."""


def digits(text: str) -> str:
    """Number words as digits ("twenty five" -> "25", "ten" -> "10"), the rest as it was, lower case."""
    text = text.lower().replace("’", "'")

    def compound(match: re.Match[str]) -> str:
        return str(_TENS[match.group(1)] + int(_NUMBERS[match.group(2)]))

    text = re.sub(rf"\b({'|'.join(_TENS)})[ -]({'|'.join(list(_NUMBERS)[1:10])})\b", compound, text)
    text = re.sub(rf"\b({'|'.join(_TENS)})\b", lambda m: str(_TENS[m.group(1)]), text)
    return re.sub(rf"\b({'|'.join(_NUMBERS)})\b", lambda m: _NUMBERS[m.group(1)], text)


def asking_clause(text: str) -> tuple[str, str]:
    """The clause that asks (the last sentence or clause that opens like a question; else the whole question) and
    the rest, which sets the scene."""
    pieces = [p.strip() for p in re.split(r"(?<=[?.!])\s+", text.strip()) if p.strip()]
    asking = [p for p in pieces if p.endswith("?")] or pieces or [text]
    sentence = asking[-1]
    clauses = [c.strip() for c in _SCENE.split(sentence) if c and c.strip()]
    # "... when I visit the office" sets the scene of what was asked before it; it asks nothing itself.
    openers = [c for i, c in enumerate(clauses) if _OPENER.match(c) and not (i and _SUBORDINATE_CLAUSE.match(c))]
    main = openers[-1] if openers else (clauses[0] if clauses else sentence)
    rest = " ".join(p for p in pieces if p is not sentence) + " " + " ".join(c for c in clauses if c is not main)
    return main, rest.strip()


def unit(word: str) -> str:
    stem = next(iter(tokens(word)), word)
    return SAME_UNIT.get(stem, stem)


def counts_named(text: str) -> tuple[tuple[float, str], ...]:
    """The numbers a text gives with what they count (Question.counts); "a"/"an" only before a unit of time."""
    found = []
    for number, word in _COUNT.findall(_AGE.sub(" ", text)):
        counted = unit(word)
        if word in _NOT_COUNTED or (number in ("a", "an") and counted not in DAYS_IN):
            continue
        found.append((1.0 if number in ("a", "an") else float(number), counted))
    return tuple(dict.fromkeys(found))


def months_named(lowered: str) -> set[str]:
    """The months a lower-case text names (MONTH_NAMED)."""
    return {"may" if "may" in m.group(0) else m.group(0) for m in MONTH_NAMED.finditer(lowered)}


def days_named(text: str) -> frozenset[str]:
    """The days of the week and the months the text names (Question.days)."""
    lowered = text.lower()
    days = {d for d in _DAYS if re.search(rf"\b{d}s?\b", lowered)} | months_named(lowered)
    if re.search(WEEKEND, lowered):
        days |= {"saturday", "sunday"}
    if re.search(WEEKDAYS, lowered):
        days |= set(_DAYS[:5])
    return frozenset(days)


def matched_tokens(asked: Question) -> list[str]:
    """The question's tokens a sentence's own words are matched on: all of them, but the premises word of "Where's
    the shop?", which names the business and is not what its address says."""
    of_the_business = "place" in asked.kinds and not asked.focus
    return [t for t in tokens(asked.text) if not (of_the_business and t in PREMISES)]


def analyse(text: str) -> Question:
    spelled = digits(text)
    asked_age = next((int(n) for m in _AGE.finditer(spelled) for n in m.groups() if n), None)
    age = asked_age if asked_age is not None else next((int(m.group(1)) for m in _IS_AGE.finditer(spelled)), None)
    main, scene = asking_clause(_IS_AGE.sub(" ", spelled))
    kinds = frozenset(kind for kind, pattern in KINDS.items() if re.search(pattern, main))
    day_tokens = set(tokens(" ".join(_DAYS) + " weekend weekday " + " ".join(m for m in MONTHS if m != "may")))
    # The age is kept as a number, not as words to find ("ten year old" is in no KB sentence).
    main, scene = _AGE_WORDS.sub(" ", main), _AGE_WORDS.sub(" ", scene)
    if re.search(OPENING_HOURS, main):
        main = re.sub(rf"\b(?:{'|'.join(_OPEN_WORDS)})\b", " ", main)  # the kind of answer, not what it is about
    frame = FRAME if _PHONING.search(spelled) else FRAME - {"phone"}
    focus = tuple(t for t in dict.fromkeys(tokens(main)) if t not in frame and t not in day_tokens)
    if "place" in kinds and focus and set(focus) <= PREMISES:
        focus = ()  # "Where's the shop?", "Where is your office?": where the business is, as "Where are you?"
    context = tuple(t for t in dict.fromkeys(tokens(scene)) if t not in frame and t not in day_tokens
                    and t not in focus)
    if context and not focus:
        # The asking clause names nothing ("what does that mean?", "what happens"): what the question is about is in
        # the rest ("My boiler shows E119, ...", "... if I cancel my appointment the same morning").
        focus, context = context, ()
    specific: dict[str, float] = {}
    for token, word in content_words(spelled):
        specific[token] = max(specific.get(token, 0.0), specificity(word))
    return Question(text, kinds | ({"age"} if asked_age is not None else set()), focus, context, days_named(spelled),
                    age, bool(_POLAR.match(main)), specific=specific, amount=bool(_AMOUNT.match(main)),
                    counts=counts_named(spelled))
