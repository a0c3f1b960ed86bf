"""The code stays readable in one sitting: no file runs past 300 lines, no function in the product or the evals
past 60, and the settings are read whole only where the agent is put together."""

import ast
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
SOURCES = sorted(p for folder in ("agent", "eval") for p in (REPO / folder).rglob("*.py"))


def test_no_python_file_runs_past_300_lines():
    files = sorted(p for folder in ("agent", "eval", "tests") for p in (REPO / folder).rglob("*.py"))
    assert {str(p.relative_to(REPO)): n for p in files if (n := len(p.read_text().splitlines())) > 300} == {}


@pytest.mark.parametrize("path", SOURCES, ids=lambda p: str(p.relative_to(REPO)))
def test_no_function_runs_past_60_lines(path):
    functions = [n for n in ast.walk(ast.parse(path.read_text()))
                 if isinstance(n, ast.FunctionDef | ast.AsyncFunctionDef)]
    assert [(f.name, f.end_lineno - f.lineno + 1) for f in functions if f.end_lineno - f.lineno + 1 > 60] == []


READS_SETTINGS_WHOLE = {"agent/__main__.py", "agent/app.py", "agent/dialplan.py", "agent/owner_commands.py",
                        "agent/settings_checks.py", "agent/stages.py", "agent/models/load.py",
                        "agent/side/notify/config.py"}
"""The entry point and what it puts the agent together with; the notifications' config checks its settings as one."""


def test_a_stage_gets_its_own_config_never_the_settings_whole():
    def imports_settings(path: Path) -> bool:
        return any(isinstance(n, ast.ImportFrom) and (n.module == "agent.settings" or n.module == "agent" and
                                                       any(a.name == "settings" for a in n.names))
                   or isinstance(n, ast.Import) and any(a.name == "agent.settings" for a in n.names)
                   for n in ast.walk(ast.parse(path.read_text())))

    readers = {str(p.relative_to(REPO)) for p in (REPO / "agent").rglob("*.py") if imports_settings(p)}
    assert readers - {"agent/settings.py"} == READS_SETTINGS_WHOLE
