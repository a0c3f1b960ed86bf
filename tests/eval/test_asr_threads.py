"""The thread-count benchmark decodes with every thread count, idle and beside a busy core."""

import json

from eval.asr_threads import main


def test_the_thread_benchmark_times_every_thread_count_at_every_load(tmp_path):
    out = tmp_path / "threads.json"
    assert main(["--threads", "1,2", "--busy", "0,20", "--limit", "2", "--json", str(out)]) == 0
    rows = json.loads(out.read_text())["rows"]
    assert [(r["busy_pct"], r["threads"]) for r in rows] == [(0, 1), (0, 2), (20, 1), (20, 2)]
    assert all(r["utterances"] == 2 and r["decode_p50_ms"] > 0 for r in rows)
    assert [r["mean_vs_fewest_threads"] for r in rows if r["threads"] == 1] == [1.0, 1.0]
