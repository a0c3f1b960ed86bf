import re
from pathlib import Path

import pytest

from agent.dialplan import DialplanError, load_dialplan, parse_dialplan, single_profile
from agent.settings import parse

REPO = Path(__file__).resolve().parents[1]
TWO = """
default = "heating"
[profiles.heating]
extensions = ["100", "Heating"]
kb_dir = "kb-a"
[profiles.dental]
extensions = ["200"]
kb_dir = "kb-b"
greeting = "Harbour Dental, hello."
max_calls = 2
"""


@pytest.fixture
def base(tmp_path):
    (tmp_path / "kb-a").mkdir()
    (tmp_path / "kb-b").mkdir()
    return tmp_path


def test_the_dialled_extension_chooses_the_profile(base):
    plan = parse_dialplan(TWO, base, parse([], {}))
    assert plan.route("200").name == "dental" and plan.route("heating").name == "heating"


def test_an_unknown_extension_gets_the_default_profile(base):
    assert parse_dialplan(TWO, base, parse([], {})).route("999").name == "heating"


def test_unset_keys_take_the_settings_and_paths_are_relative_to_the_file(base):
    settings = parse([], {"AGENT_GREETING": "Hi there.", "AGENT_MAX_CALLS": "3", "AGENT_DATA_DIR": "/d"})
    heating, dental = parse_dialplan(TWO, base, settings).profiles
    assert (heating.greeting, heating.max_calls, heating.kb_dir) == ("Hi there.", 3, base / "kb-a")
    assert (dental.greeting, dental.max_calls) == ("Harbour Dental, hello.", 2)


def test_each_profile_has_its_own_index(base):
    heating, dental = parse_dialplan(TWO, base, parse([], {"AGENT_DATA_DIR": "/d"})).profiles
    assert heating.index_path == Path("/d/index-heating.sqlite3") != dental.index_path


def test_without_a_file_one_profile_comes_from_the_settings():
    settings = parse([], {"AGENT_KB_DIR": "/srv/kb"})
    plan = load_dialplan(settings)
    assert plan == single_profile(settings)
    assert plan.route("anything").kb_dir == Path("/srv/kb") and plan.default.index_path == settings.index_path


@pytest.mark.parametrize("text, message", [
    ("[profiles.a\n", "not valid TOML"),
    ("default = 'a'\n", "no [profiles.NAME] table"),
    ("[profiles.a]\nkb_dir = 'kb-a'\ncolour = 'red'\n", "unknown key(s) colour"),
    ("[profiles.a]\nkb_dir = 'missing'\n", "is not a directory"),
    ("[profiles.a]\nkb_dir = 'kb-a'\nmax_calls = 0\n", "max_calls must be an integer in 1..64"),
    ("[profiles.a]\nkb_dir = 'kb-a'\nextensions = '100'\n", "extensions must be a list"),
    ("[profiles.a]\nkb_dir = 'kb-a'\nextensions = ['1']\n[profiles.b]\nkb_dir = 'kb-b'\nextensions = ['1']\n",
     "extension '1' is in profiles 'a' and 'b'"),
    ("default = 'c'\n[profiles.a]\nkb_dir = 'kb-a'\n", "default profile 'c' is not one of a"),
    ("[profiles.'A B']\nkb_dir = 'kb-a'\n", "names are 1-32 lowercase"),
    ("surprise = 1\n[profiles.a]\nkb_dir = 'kb-a'\n", "unknown top-level key(s) surprise"),
    ("[profiles.a]\nkb_dir = 'kb-a'\ntransfer_to = 'reception'\n", "transfer_to must be a SIP URI"),
    ("[profiles.a]\nkb_dir = 'kb-a'\ntransfer_digit = '00'\n", "transfer_digit must be one DTMF digit"),
])
def test_a_bad_dialplan_is_rejected_with_the_reason(base, text, message):
    with pytest.raises(DialplanError, match=re.escape(message)):
        parse_dialplan(text, base, parse([], {}))


def test_the_shipped_dialplan_routes_its_extensions_to_the_bundled_kb():
    plan = load_dialplan(parse([], {"AGENT_DIALPLAN": str(REPO / "dialplans" / "agent.toml")}))
    assert plan.route("100").kb_dir.resolve() == (REPO / "kb").resolve()
    assert plan.default.name == "heating"


def test_a_consent_notice_is_spoken_before_the_greeting_and_profiles_may_differ(base):
    text = TWO.replace('greeting = "Harbour Dental, hello."', 'greeting = "Harbour Dental, hello."\n'
                       'consent_notice = "This call may be recorded."')
    heating, dental = parse_dialplan(text, base, parse([], {})).profiles
    assert dental.opening == "This call may be recorded. Harbour Dental, hello."
    assert heating.opening == heating.greeting
    with pytest.raises(DialplanError, match="consent_notice must be a string"):
        parse_dialplan(text.replace('"This call may be recorded."', "3"), base, parse([], {}))


def test_a_profile_transfers_to_its_own_person_and_the_settings_give_the_default(base):
    text = TWO.replace('max_calls = 2', 'max_calls = 2\ntransfer_to = "sip:frontdesk@pbx.example.com"\n'
                       'transfer_digit = "none"')
    settings = parse([], {"AGENT_TRANSFER_TO": "sip:200@pbx.example.com", "AGENT_TRANSFER_DIGIT": "9"})
    heating, dental = parse_dialplan(text, base, settings).profiles
    assert (heating.transfer_to, heating.transfer_digit) == ("sip:200@pbx.example.com", "9")
    assert (dental.transfer_to, dental.transfer_digit) == ("sip:frontdesk@pbx.example.com", "")
