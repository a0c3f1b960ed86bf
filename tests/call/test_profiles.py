"""The agent's dialplan on real calls: one agent, two KBs, the dialled extension picks the KB."""

import shutil

import pytest

from agent.settings import Settings
from eval.kit.scoring import normalize
from tests.conftest import REPO
from tests.peers import HOURS as BUNDLED_HOURS
from tests.peers import AgentProcess, heard, likeness, place_call

DENTAL_HOURS = "Harbour Dental is open Tuesday to Saturday, from 7am to 3pm."
DENTAL = f"""# Harbour Dental

## Opening hours
{DENTAL_HOURS} The clinic is closed on Sundays and Mondays.

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
HOURS = {"100": normalize(BUNDLED_HOURS), "dental": normalize(DENTAL_HOURS)}
"""Each KB's sentence on opening hours, the answer to the question asked."""



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


@pytest.mark.parametrize(("dial", "other"), [("100", "dental"), ("dental", "100")])
def test_the_dialled_extension_gets_its_own_kb(two_kb_agent, models, questions, tmp_path, dial, other):
    timeline = place_call(two_kb_agent, tmp_path, "--question", str(questions["hours"]), "--question-at", "3.5",
                          duration=14, dial=dial)
    greeting = heard(models, timeline, 0, timeline["question_tick"])
    assert likeness(greeting, GREETINGS[dial]) > likeness(greeting, GREETINGS[other]), greeting
    # tiny.en may mishear a day's name ("two states a saturday"): which KB answered is told by likeness.
    answer = heard(models, timeline, timeline["question_end_tick"])
    assert likeness(answer, HOURS[dial]) > likeness(answer, HOURS[other]), answer


def test_each_profile_keeps_its_own_index(two_kb_agent):
    data = two_kb_agent.log_path.parent / "data"
    assert (data / "index-heating.sqlite3").is_file() and (data / "index-dental.sqlite3").is_file()
    started = {e["dialed"]: e["profile"] for e in two_kb_agent.events("call.started")}
    assert started.get("dental") == "dental" and started.get("100") == "heating"
