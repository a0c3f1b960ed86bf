"""The agent's dialplan on real calls: one agent, two KBs, the dialled extension picks the KB."""

import shutil

import pytest

from agent.settings import Settings
from eval.kit.scoring import normalize
from tests.conftest import REPO
from tests.peers import AgentProcess, heard, likeness, place_call

DENTAL = """# Harbour Dental

## Opening hours
Harbour Dental is open Tuesday to Saturday, from 7am to 3pm. The clinic is closed on Sundays and Mondays.

## Address
The clinic is at 3 Pier Road, next to the lifeboat station.
"""

DIALPLAN = """
default = "heating"
[profiles.heating]
extensions = ["100"]
kb_dir = "kb-heating"
[profiles.dental]
extensions = ["200", "dental"]
kb_dir = "kb-dental"
greeting = "Hello, Harbour Dental here. How can I help?"
"""
GREETINGS = {"100": normalize(Settings.greeting),
             "dental": normalize("Hello, Harbour Dental here. How can I help?")}



@pytest.fixture(scope="module")
def two_kb_agent(tmp_path_factory, settings):
    plans = tmp_path_factory.mktemp("dialplan")
    shutil.copytree(REPO / "kb", plans / "kb-heating")
    (plans / "kb-dental").mkdir()
    (plans / "kb-dental" / "dental.md").write_text(DENTAL)
    (plans / "agent.toml").write_text(DIALPLAN)
    process = AgentProcess(tmp_path_factory.mktemp("agent"), settings, dialplan=plans / "agent.toml",
                           inactivity_s=60)
    yield process
    process.stop()


@pytest.mark.parametrize(("dial", "other", "answer"), [
    ("100", "dental", "monday to friday"),
    ("dental", "100", "tuesday to saturday"),
])
def test_the_dialled_extension_gets_its_own_kb(two_kb_agent, models, questions, tmp_path, dial, other, answer):
    timeline = place_call(two_kb_agent, tmp_path, "--question", str(questions["hours"]), "--question-at", "3.5",
                          duration=14, dial=dial)
    greeting = heard(models, timeline, 0, timeline["question_tick"])
    assert likeness(greeting, GREETINGS[dial]) > likeness(greeting, GREETINGS[other]), greeting
    assert answer in heard(models, timeline, timeline["question_end_tick"])


def test_each_profile_keeps_its_own_index(two_kb_agent):
    data = two_kb_agent.log_path.parent / "data"
    assert (data / "index-heating.sqlite3").is_file() and (data / "index-dental.sqlite3").is_file()
    started = {e["dialed"]: e["profile"] for e in two_kb_agent.events("call.started")}
    assert started.get("dental") == "dental" and started.get("100") == "heating"
