"""The batching benchmark runs end to end on the real model and reports every configuration."""

import json

from eval.asr_batch import CONFIGS, main


def test_the_batching_benchmark_times_every_configuration_and_forms_a_batch(tmp_path):
    out = tmp_path / "batch.json"
    assert main(["--calls", "3", "--repeats", "1", "--json", str(out)]) == 0
    rows = json.loads(out.read_text())["rows"]
    assert [r["config"] for r in rows] == list(CONFIGS)
    assert all(r["last_transcript_p50_ms"] > 0 for r in rows)
    # One replica, three questions at once: the first is decoded alone, the two queued behind it together.
    assert sorted(rows[-1]["batch_sizes"]) == [1, 2, 2]
