"""The decode-cost benchmark times every variant of the first listen and splits off the encoder's part."""

import json

from eval.asr_cost import main, variants


def test_the_agents_own_decode_comes_first_and_no_variant_twice():
    assert [(beam, hint) for _, beam, hint in variants(5)] == [(5, True), (5, False), (3, True), (1, True),
                                                                (1, False)]
    assert [(beam, hint) for _, beam, hint in variants(3)] == [(3, True), (3, False), (1, True), (1, False)]


def test_every_variant_is_timed_with_its_encoder_part_and_against_the_agents(tmp_path):
    out = tmp_path / "cost.json"
    assert main(["--limit", "2", "--json", str(out)]) == 0
    rows = json.loads(out.read_text())["rows"]
    assert [r["beam"] for r in rows] == [5, 5, 3, 1, 1] and rows[0]["mean_vs_agent"] == 1.0
    assert all(r["utterances"] == 2 and 0 < r["encoder_p50_ms"] < r["decode_p50_ms"] for r in rows)
