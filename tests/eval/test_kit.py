"""eval/ is a kit and its runners: every runner says what it measures, and imports only the kit (and agent/)."""

import ast
import contextlib
import importlib
import io
from pathlib import Path

import pytest

EVAL = Path(__file__).resolve().parents[2] / "eval"
RUNNERS = sorted(p.stem for p in EVAL.glob("*.py") if p.stem != "__init__")
KIT = sorted(p.stem for p in (EVAL / "kit").glob("*.py") if p.stem != "__init__")


def eval_imports(path: Path) -> set[str]:
    """The eval modules `path` imports, anywhere in it (a function's own imports too)."""
    found = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.ImportFrom) and node.module and node.module.split(".")[0] == "eval":
            found |= {node.module} if node.module != "eval" else {f"eval.{a.name}" for a in node.names}
        elif isinstance(node, ast.Import):
            found |= {a.name for a in node.names if a.name.split(".")[0] == "eval"}
    return found


@pytest.mark.parametrize("module", [f"eval/{name}.py" for name in RUNNERS] + [f"eval/kit/{name}.py" for name in KIT])
def test_nothing_in_eval_imports_a_runner(module):
    runners = {f"eval.{name}" for name in RUNNERS}
    assert not eval_imports(EVAL.parent / module) & runners


@pytest.mark.parametrize("runner", RUNNERS)
def test_each_runner_says_what_it_measures(runner):
    out = io.StringIO()
    with contextlib.redirect_stdout(out), pytest.raises(SystemExit) as exited:
        importlib.import_module(f"eval.{runner}").main(["--help"])
    assert exited.value.code == 0
    description = out.getvalue().split("\n\n")[1]
    assert len(description.split()) >= 8, description
