"""Text to speakable text for Piper: what reads badly aloud is expanded, facts are never changed.

Pure string rewriting. Checked by ear and by transcribing Piper's output with
Whisper: "$2,800" came back as "Balor 2018", "ORCHID-47" as "work at 47",
"24/7" as "24 slash seven", "35 sq ft" as "35 SQFD"; the rewritten forms come back right.
"""

from __future__ import annotations

import re

_DIGIT_WORDS = "zero one two three four five six seven eight nine".split()

_MONEY = re.compile(r"([$£€])(\d[\d,]*)(?:\.(\d{2}))?")
_PENCE = re.compile(r"\b(\d+)p\b")
_CURRENCIES = {"$": ("dollar", "dollars", " and {} cents", "cents"), "£": ("pound", "pounds", " {}", "pence"),
               "€": ("euro", "euros", " {}", "cents")}
"""A currency's unit, one and many, how its minor part follows ("12 dollars and 50 cents", "1 pound 50") and what
the minor part alone is called ("50 pence"). Piper reads "£45" as "pound forty-five" and "€65" as "euro sixty-five",
the symbol first."""
_RANGE = re.compile(r"(\d|\b[AP]M)\s*(?:–|—|-(?=\s*\d+\s*[AP]M\b))\s*(\d)")
_AM_PM = re.compile(r"\b([ap])\.?\s?m\b\.?", re.IGNORECASE)
_PHONE = re.compile(r"\b(?:1-)?\d{3}-\d{3}-\d{4}\b|\b\d{3}-\d{4}\b|"
                    r"(?<![\d£$€.,])(?:\+\d{1,3} ?|\b0)\d{2,4}(?: \d{3,6}){1,2}\b(?![.,]\d)")
"""A phone number: "555-0142", "1-800-555-0199", "01632 960 418", "020 7946 0958", "+44 1632 960418". Piper reads
"01632 960 562" as numbers ("nine hundred and sixty"), which neither a caller writing it down nor Whisper takes as
its digits."""
_CODE = re.compile(r"\b([A-Z]{2,})-(\d+)\b|\b([A-Z])(\d{2,})\b")
_EMAIL = re.compile(r"\b([\w.+-]+)@([\w-]+(?:\.[\w-]+)+)\b")
_UNITS = [(re.compile(r"\b(\d+)\s*min\b\.?"), r"\1 minutes"), (re.compile(r"\b(\d+)\s*hrs?\b\.?"), r"\1 hours"),
          (re.compile(r"\b(\d+)\s*sq\.?\s*ft\b\.?"), r"\1 square feet"),
          (re.compile(r"\b(\d+)\s*sq\.?\s*m\b\.?"), r"\1 square metres"),
          (re.compile(r"\b24/7\b"), "twenty-four seven"), (re.compile(r"\s*&\s*"), " and "),
          (re.compile(r"(\d)\s*%"), r"\1 percent"), (re.compile(r"\be\.g\.", re.IGNORECASE), "for example"),
          (re.compile(r"\bi\.e\.", re.IGNORECASE), "that is"), (re.compile(r"\bapprox\.", re.IGNORECASE),
                                                               "approximately")]


def _digits(text: str) -> str:
    """Digits one by one, the way codes and phone numbers are read out."""
    return " ".join(_DIGIT_WORDS[int(d)] for d in text if d.isdigit())


def _money(match: re.Match[str]) -> str:
    one, many, minor, small = _CURRENCIES[match.group(1)]
    whole, part = int(match.group(2).replace(",", "")), match.group(3)
    if whole == 0 and part:
        return f"{int(part)} {small}"
    spoken = f"{whole} {one if whole == 1 else many}"
    return spoken + (minor.format(int(part)) if part and part != "00" else "")


def _phone(match: re.Match[str]) -> str:
    number = match.group(0)
    if " " in number and not 10 <= sum(c.isdigit() for c in number) <= 13:
        return number  # spaced groups of digits that are not a phone number's length
    spoken = ", ".join(_digits(group) for group in re.split(r"[- ]", number.lstrip("+")))
    return "plus " + spoken if number.startswith("+") else spoken


def _code(match: re.Match[str]) -> str:
    letters, number = (match.group(1), match.group(2)) if match.group(1) else (match.group(3), match.group(4))
    # A pronounceable word is said as a word; anything else letter by letter.
    word = letters.capitalize() if re.search(r"[AEIOU]", letters) and len(letters) > 3 else " ".join(letters)
    return f"{word}, {_digits(number)}"


def _email(match: re.Match[str]) -> str:
    user, domain = match.group(1), match.group(2)
    return f"{user.replace('.', ' dot ')} at {domain.replace('.', ' dot ')}"


def speakable(text: str) -> str:
    """Rewrite `text` so Piper reads it as a person would say it."""
    text = _EMAIL.sub(_email, text)
    text = _PHONE.sub(_phone, text)
    text = _MONEY.sub(_money, text)
    text = _PENCE.sub(r"\1 pence", text)
    text = _CODE.sub(_code, text)
    # "p.m." at the end of a sentence carries the sentence's full stop too.
    text = _AM_PM.sub(lambda m: f"{m.group(1).upper()}M" + ("." if m.end() == len(text) and
                                                             m.group(0).endswith(".") else ""), text)
    text = _RANGE.sub(r"\1 to \2", text)
    for pattern, replacement in _UNITS:
        text = pattern.sub(replacement, text)
    return " ".join(text.split())
