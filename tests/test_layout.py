"""The code stays readable in one sitting: no function in the product or the evals runs past 60 lines."""

import ast
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
SOURCES = sorted(p for folder in ("agent", "eval") for p in (REPO / folder).rglob("*.py"))


@pytest.mark.parametrize("path", SOURCES, ids=lambda p: str(p.relative_to(REPO)))
def test_no_function_runs_past_60_lines(path):
    functions = [n for n in ast.walk(ast.parse(path.read_text()))
                 if isinstance(n, ast.FunctionDef | ast.AsyncFunctionDef)]
    assert [(f.name, f.end_lineno - f.lineno + 1) for f in functions if f.end_lineno - f.lineno + 1 > 60] == []
