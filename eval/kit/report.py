"""Replay reports: summary statistics, report.json, report.md and latency.png."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np

from eval.kit.diagnosis import CLARIFICATIONS, wrong_answer
from eval.kit.plots import pyplot, save


def percentile(values: list[float], q: float) -> float | None:
    return round(float(np.percentile(values, q)), 1) if values else None


def summarize(rows: list[dict]) -> dict:
    scored = [r for r in rows if r.get("correct") is not None]
    answerable = [r for r in scored if not r["expect_abstain"]]
    latencies = [r["latency_ms"] for r in scored if r.get("latency_ms") is not None]
    bargeins = [r["bargein_ms"] for r in scored if r.get("bargein_ms") is not None]
    causes = {}
    for r in scored:
        if r.get("cause"):
            causes[r["cause"]] = causes.get(r["cause"], 0) + 1
    outcomes = [o for r in rows for o in r.get("agent_outcomes", [r["agent_outcome"]] if "agent_outcome" in r else [])]
    return {"n": len(rows), "errors": sum("error" in r for r in rows),
            "accuracy": _share(answerable, lambda r: r["correct"]),
            "first_try_accuracy": _share(answerable, lambda r: r["correct"] and len(r.get("exchanges", [1])) == 1),
            "wrong_answers": sum(wrong_answer(r) for r in scored),
            "asked_again": sum(o in ("asked again", "not confirmed") for o in outcomes),
            "confirmations": outcomes.count("confirming"),
            "cut_offs": sum(bool(r.get("cut_off")) for r in rows),
            "talk_over_p95_ms": percentile([r["talk_over_ms"] for r in rows if r.get("cut_off")], 95),
            "miss_causes": causes,
            "abstain_accuracy": _abstain_accuracy(rows),
            "in_kb": _outcomes(answerable), "out_of_kb": _outcomes([r for r in scored if r["expect_abstain"]]),
            "latency_p50_ms": percentile(latencies, 50), "latency_p95_ms": percentile(latencies, 95),
            "bargein_p50_ms": percentile(bargeins, 50), "bargein_p95_ms": percentile(bargeins, 95),
            **_latency_split(scored), **_answerers(rows)}


def _latency_split(rows: list[dict]) -> dict:
    """p50 / p95 of each part of the latency (eval.kit.wire.latency_split), where the cases have it."""
    out = {}
    for part in ("way_in_ms", "agent_ms", "way_out_ms"):
        values = [r[part] for r in rows if r.get(part) is not None]
        if values:
            out[f"{part[:-3]}_p50_ms"], out[f"{part[:-3]}_p95_ms"] = percentile(values, 50), percentile(values, 95)
    return out


def _answerers(rows: list[dict]) -> dict:
    """Who phrased the answers, when an LLM was set up: counts, why the LLM was overruled, its time to a first
    checked sentence, and facts spoken that the KB lacks (see eval.replay --llm)."""
    phrased = [r for r in rows if r.get("agent_answerer")]
    if not phrased:
        return {}
    answerers: dict[str, int] = {}
    overruled: dict[str, int] = {}
    for r in phrased:
        answerers[r["agent_answerer"]] = answerers.get(r["agent_answerer"], 0) + 1
        if r["agent_answerer"] != "llm" and r.get("agent_llm_reason"):
            why = r["agent_llm_reason"].split(":")[0].split(" (")[0]
            overruled[why] = overruled.get(why, 0) + 1
    firsts = [r["llm_first_sentence_ms"] for r in phrased if r.get("llm_first_sentence_ms") is not None]
    return {"answerers": answerers, "llm_overruled": overruled,
            "llm_first_sentence_p50_ms": percentile(firsts, 50), "llm_first_sentence_p95_ms": percentile(firsts, 95),
            "unsupported_facts_spoken": sum(len(r.get("unsupported", [])) for r in phrased)}


def _share(rows: list[dict], counts) -> float | None:
    return round(sum(bool(counts(r)) for r in rows) / len(rows), 4) if rows else None


def _outcomes(rows: list[dict]) -> dict[str, int]:
    """What the caller got in the end: the right answer (or, out of the KB, a decline), a question left on 'could
    you say it again?' or a confirmation (answered with --caller-repeats, left there without), a decline of a
    question the KB could answer, or a wrong answer."""
    asked = [r for r in rows if not r["correct"] and r.get("agent_outcome") in CLARIFICATIONS]
    right = [r for r in rows if r["correct"]]
    declined = [r for r in rows if not r["correct"] and r not in asked and r.get("abstained")]
    return {"right": len(right), "asked_again": len(asked), "declined": len(declined),
            "wrong": len(rows) - len(right) - len(asked) - len(declined)}


def _abstain_accuracy(rows: list[dict]) -> float | None:
    expected = [r for r in rows if r.get("expect_abstain") and r.get("correct") is not None]
    return round(sum(r["correct"] for r in expected) / len(expected), 4) if expected else None


def write_reports(report: dict, out: Path) -> None:
    out.mkdir(parents=True, exist_ok=True)
    (out / "report.json").write_text(json.dumps(report, indent=2))
    s = report["summary"]
    source = f"recording {report['recording']}" if "recording" in report else f"codec {report['codec']}"
    lines = ["# Call replay", "", f"{source}; {s['n']} questions, {s['errors']} errors", "",
             "| metric | value |", "|---|---|"] + [f"| {k} | {v} |" for k, v in s.items()] + [
        "", "| case | correct | cause | exchanges | latency ms | cut off (ms) | barge-in ms | agent heard | "
            "agent answered | scorer heard |", "|---|---|---|---|---:|---:|---:|---|---|---|"]
    for r in report["cases"]:
        verdict = "interrupted" if r.get("interrupted") else r.get("correct", "error")
        lines.append(f"| {r['id']} | {verdict} | {r.get('cause', '')} | {' / '.join(r.get('exchanges', []))} | "
                     f"{r.get('latency_ms', '')} | {r.get('talk_over_ms', '') if r.get('cut_off') else ''} | "
                     f"{r.get('bargein_ms', '')} | {(r.get('agent_heard') or '')[:60]} | "
                     f"{(r.get('agent_answer') or '')[:50]} | {(r.get('heard') or r.get('error', ''))[:60]} |")
    if report.get("agent_stages_ms"):
        lines += ["", "Agent-side stages (from /metrics/summary, ms): `response` is the agent's own end of "
                  "speech → first answer frame, before the network and the caller's jitter buffer.", "",
                  "| stage | count | p50 | p95 |", "|---|---:|---:|---:|"]
        for stage, row in report["agent_stages_ms"].items():
            lines.append(f"| {stage} | {row['count']} | {row.get('p50_ms', '')} | {row.get('p95_ms', '')} |")
    (out / "report.md").write_text("\n".join(lines) + "\n")
    latencies = [r["latency_ms"] for r in report["cases"] if r.get("latency_ms") is not None]
    if latencies:
        fig, ax = pyplot().subplots(figsize=(7, 4))
        ax.hist(latencies, bins=min(20, max(5, len(latencies) // 2)), color="#3b7dd8")
        for q, style in ((50, "--"), (95, ":")):
            ax.axvline(np.percentile(latencies, q), color="black", linestyle=style, label=f"p{q}")
        ax.set_xlabel("end of question → first answer audio on the wire (ms)")
        ax.set_ylabel("questions")
        ax.legend()
        save(fig, out / "latency.png")
