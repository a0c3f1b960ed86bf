"""eval.kb_answers on any KB and cases file: a tiny one made here, scored end to end."""

import json
import os
import subprocess
import sys

from tests.conftest import REPO


def test_retrieval_eval_scores_a_custom_kb_and_writes_json(tmp_path, settings):
    kb = tmp_path / "kb"
    kb.mkdir()
    (kb / "shop.md").write_text("# Bakery\n\n## Hours\n\nThe bakery opens at 7 a.m. every day.\n\n"
                                "## Bread\n\nA sourdough loaf costs $6.\n")
    cases = tmp_path / "cases.jsonl"
    cases.write_text("\n".join(json.dumps(c) for c in [
        {"id": "open", "call": "1", "say": "When does the bakery open?", "expect_any": ["7 a.m."]},
        {"id": "loaf", "call": "2", "say": "How much is a sourdough loaf?", "expect_any": ["$6"]},
        {"id": "pizza", "call": "3", "say": "Can I order a pepperoni pizza for delivery?", "expect_abstain": True},
    ]) + "\n")
    out = tmp_path / "result.json"
    env = {**os.environ, "AGENT_MODELS_DIR": str(settings.models_path.resolve())}
    result = subprocess.run([sys.executable, "-m", "eval.kb_answers", "--kb", str(kb), "--cases", str(cases),
                             "--json", str(out)], capture_output=True, text=True, env=env, cwd=REPO, timeout=120)
    assert result.returncode == 0, result.stderr
    summary = json.loads(out.read_text())["summary"]
    assert summary["n"] == 3 and summary["answerable"] == 2 and summary["out_of_kb"] == 1
    assert summary["recall_at_1"] == 1.0 and summary["answer_accuracy"] == 1.0
    assert summary["abstain_accuracy"] == 1.0 and summary["query_p50_ms"] > 0
    assert '"answer_accuracy": 1.0' in result.stdout


def test_bench_kb_runs_on_a_small_generated_kb(settings):
    env = {**os.environ, "AGENT_MODELS_DIR": str(settings.models_path.resolve())}
    result = subprocess.run([sys.executable, "-m", "eval.bench_kb", "--chunks", "40", "--queries", "10",
                             "--refreshes", "1"], capture_output=True, text=True, env=env, cwd=REPO, timeout=300)
    assert result.returncode == 0, result.stderr
    report = json.loads(result.stdout)
    assert report["chunks"] == 40 and report["queries"] == 10 and 0 <= report["recall_at_3"] <= 1
    assert report["query_p50_ms"] > 0 and report["refresh_one_file_median_s"] > 0


def test_questions_can_be_asked_with_the_end_mark_a_recogniser_writes():
    from eval.kb_answers import with_end_mark

    assert with_end_mark("Are you open on Sundays?", ".") == "Are you open on Sundays."
    assert with_end_mark("Tell me about the plan.", "") == "Tell me about the plan"
    assert with_end_mark("Tell me about the plan.", None) == "Tell me about the plan."
