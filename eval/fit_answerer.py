"""Fit the extractive answerer's weights (agent/knowledge/answerer.toml) on the KBs tuning may look at, and say
how well they carry to a KB left out of the fit.

    python -m eval.fit_answerer [--kbs dev,bundled] [--write] [--json OUT]

Every question of the tuning KBs (eval/kbs/halves.toml: the dev half and the bundled KB; never the test half) is
drafted as on a call, one memory per call group, and each retrieved sentence measured (knowledge.features). Two
fits follow, both plain and regularised: which sentence answers the question (a softmax over each question's
sentences, the right ones being those that hold its expected answer), then whether the chosen one answers it at
all (a logistic regression; out-of-KB questions and wrongly chosen sentences are the "no"s). The thresholds are
then set on the fitted probability: answering outright from `firm_from` (where answers are right 98 times in 100),
confirming from `abstain_below` (where a confirmation gains more right answers than it costs exchanges), declining
below. Leave-one-KB-out
shows what a KB nobody tuned for can expect: each tuning KB answered with weights fitted on the others.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from dataclasses import dataclass, replace
from datetime import date
from pathlib import Path

import numpy as np

from agent.knowledge.answer import DECISION, WEIGHTS_FILE, Weights, candidates, decision_features, measure
from agent.knowledge.features import SENTENCE, unknown_share
from agent.knowledge.memory import CallMemory
from agent.knowledge.text import as_asked
from eval.kit.cases import right_answer
from eval.kit.kbs import halves, kb_and_cases
from eval.kit.knowledge import build_knowledge

FIRM_PRECISION = 0.97
CONFIRMED_RIGHT, CONFIRMED_WRONG = 0.8, 0.3
"""What a confirmation is worth: a right answer one exchange late, or (the caller says no) two exchanges lost."""
SELECT_REGULARISATION, DECIDE_REGULARISATION = 0.003, 0.03
"""L2 penalties of the two fits, chosen by leave-one-KB-out over the tuning KBs (select: the sentence chosen right
most often; decide: most answers right outright for the fewest wrong): 0.003 and 0.03 against 0.01 for both,
86.6% -> 87.6% chosen right, 73.3% -> 78.0% answered right outright, 13 -> 12 wrong, out-of-KB declined 92.5%."""


@dataclass
class Question:
    kb: str
    case_id: str
    out_of_kb: bool
    follow_up: bool
    features: np.ndarray
    """One row a retrieved sentence (knowledge.features.SENTENCE)."""
    right: np.ndarray
    """Whether each sentence holds the expected answer."""
    asked: object
    unknown: float
    """The share of the question's focus the KB never uses."""


def collect(names: list[str], scratch: Path) -> list[Question]:
    """Every case of the named KBs measured as the agent drafts it (the memory follows the answers given)."""
    env = dict(os.environ)
    env.setdefault("AGENT_MODELS_DIR", str(Path(env.get("AGENT_DATA_DIR", "var")) / "models"))
    out = []
    for name in names:
        with kb_and_cases(name) as (kb, cases):
            knowledge = build_knowledge(kb, scratch / name.replace(":", "-"), env)
            snapshot = knowledge.index.snapshot
            memories: dict[str, CallMemory] = {}
            for case in cases:
                memory = memories.setdefault(case.call, CallMemory())
                question = as_asked(case.say)
                query = replace(memory.query(question), recovered=knowledge.reworded(snapshot, question))
                passages, vector, expanded, recovered = knowledge.retrieve(snapshot, query)
                cands = candidates(snapshot, passages)
                if cands:
                    asked, features = measure(snapshot, cands, vector, expanded, query, recovered)
                    right = np.array([not case.expect_abstain and right_answer(
                        case, c.text, [" > ".join(snapshot.chunks[c.chunk_index].chunk.heading)]) for c in cands])
                    out.append(Question(name, case.id, case.expect_abstain, query.follow_up, features, right, asked,
                                        unknown_share(asked, snapshot)))
                knowledge.commit(memory, knowledge.draft(memory, case.say))
    return out


def fit_select(questions: list[Question], iterations: int = 3000, rate: float = 0.5) -> np.ndarray:
    """Weights for which the right sentences take the most of each question's softmax (questions with one)."""
    usable = [q for q in questions if q.right.any()]
    w = np.zeros(len(SENTENCE))
    for _ in range(iterations):
        gradient = SELECT_REGULARISATION * w
        for q in usable:
            scores = q.features @ w
            p = np.exp(scores - scores.max())
            p /= p.sum()
            right = p * q.right
            target = right / right.sum()
            gradient += (q.features.T @ (p - target)) / len(usable)
        w -= rate * gradient
    return w


def decisions(questions: list[Question], select: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """For each question: the decision features of its best sentence, and whether that sentence is right."""
    rows, labels = [], []
    for q in questions:
        scores = q.features @ select
        best = int(np.argmax(scores))
        rows.append(decision_features(q.asked, q.features, scores, best, q.unknown, q.follow_up))
        labels.append(bool(q.right[best]))
    return np.array(rows), np.array(labels, dtype=float)


def fit_decide(rows: np.ndarray, labels: np.ndarray, iterations: int = 25) -> np.ndarray:
    """Logistic regression weights (the bias last) for P(the best sentence is right), by Newton's method on
    standardised features with an L2 penalty, returned for the features as they are."""
    mean, spread = rows.mean(axis=0), rows.std(axis=0) + 1e-6
    x = np.hstack([(rows - mean) / spread, np.ones((len(rows), 1))])
    penalty = np.diag([DECIDE_REGULARISATION * len(x)] * rows.shape[1] + [0.0])
    w = np.zeros(x.shape[1])
    for _ in range(iterations):
        p = 1 / (1 + np.exp(-(x @ w)))
        hessian = x.T @ (x * (p * (1 - p))[:, None]) + penalty
        w -= np.linalg.solve(hessian, x.T @ (p - labels) + penalty @ w)
    scaled = w[:-1] / spread
    return np.append(scaled, w[-1] - float(mean @ scaled))


def probabilities(rows: np.ndarray, decide: np.ndarray) -> np.ndarray:
    return 1 / (1 + np.exp(-(rows @ decide[:-1] + decide[-1])))


def thresholds(p: np.ndarray, labels: np.ndarray) -> tuple[float, float]:
    """`firm_from`: the lowest probability from which FIRM_PRECISION of answers are right (answered outright);
    `abstain_below`: below it the agent declines, and from it up to `firm_from` it confirms ("Are you asking about
    ...?"), set where confirming gains most: a right answer after a yes is worth CONFIRMED_RIGHT, a confirmation
    the caller says no to costs CONFIRMED_WRONG (two exchanges, then a decline)."""
    grid = np.linspace(0.05, 0.95, 91)
    firm = next((float(t) for t in grid if (p >= t).any() and labels[p >= t].mean() >= FIRM_PRECISION), 0.95)
    band = [float(((p >= t) & (p < firm) & (labels > 0)).sum() * CONFIRMED_RIGHT
                  - ((p >= t) & (p < firm) & (labels == 0)).sum() * CONFIRMED_WRONG) for t in grid]
    abstain = float(grid[int(np.argmax(band))]) if max(band) > 0 else firm
    return min(abstain, firm), max(firm, abstain + 0.01)


def fit(questions: list[Question]) -> Weights:
    select = fit_select(questions)
    rows, labels = decisions(questions, select)
    decide = fit_decide(rows, labels)
    abstain, firm = thresholds(probabilities(rows, decide), labels)
    return Weights(select.astype(np.float32), decide.astype(np.float32), abstain, firm)


def outcome(questions: list[Question], weights: Weights) -> dict:
    """Draft-level results of the weights, counting only answers given outright (a confirmed one depends on the
    caller): answerable questions answered right, out-of-KB ones not answered, wrong answers."""
    rows, labels = decisions(questions, weights.select)
    answered = probabilities(rows, weights.decide) >= weights.firm_from
    answerable = np.array([not q.out_of_kb for q in questions])
    right = answered & (labels > 0)
    chosen_right = float(labels[answerable].mean()) if answerable.any() else None
    return {"n": len(questions), "best_sentence_right": round(chosen_right, 4) if chosen_right is not None else None,
            "answered_right": round(float(right[answerable].mean()), 4) if answerable.any()
            else None, "out_of_kb_declined": round(float((~answered[~answerable]).mean()), 4)
            if (~answerable).any() else None, "wrong_answers": int((answered & (labels == 0)).sum())}


def leave_one_out(questions: list[Question]) -> dict:
    kbs = list(dict.fromkeys(q.kb for q in questions))
    return {kb: outcome([q for q in questions if q.kb == kb], fit([q for q in questions if q.kb != kb]))
            for kb in kbs}


def write(weights: Weights, names: list[str], path: Path = WEIGHTS_FILE) -> None:
    commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True).stdout.strip()
    lines = [f"# Fitted by `python -m eval.fit_answerer --write` on {date.today()} at {commit or 'an unknown commit'},",
             f"# on the tuning KBs: {', '.join(names)}. Do not edit by hand: refit.", "", "[select]"]
    lines += [f"{name} = {value:.4f}" for name, value in zip(SENTENCE, weights.select, strict=True)]
    lines += ["", "[decide]"] + [f"{name} = {value:.4f}" for name, value in
                                 zip((*DECISION, "bias"), weights.decide, strict=True)]
    lines += ["", "[evidence]", f"abstain_below = {weights.abstain_below:.2f}", f"firm_from = {weights.firm_from:.2f}"]
    path.write_text("\n".join(lines) + "\n")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m eval.fit_answerer", description=__doc__.splitlines()[0])
    parser.add_argument("--kbs", default="dev,bundled", help="halves (of eval/kbs/halves.toml) to fit on; never test")
    parser.add_argument("--write", action="store_true", help=f"write the fitted weights to {WEIGHTS_FILE.name}")
    parser.add_argument("--json", type=Path)
    args = parser.parse_args(argv)
    split = halves()
    if "test" in args.kbs.split(","):
        parser.error("the test half is only reported, never fitted on")
    names = [name for half in args.kbs.split(",") for name in split[half]]
    with tempfile.TemporaryDirectory(prefix="eval-fit-") as scratch:
        questions = collect(names, Path(scratch))
    weights = fit(questions)
    report = {"fitted_on": names, "questions": len(questions), "in_sample": outcome(questions, weights),
              "leave_one_kb_out": leave_one_out(questions), "abstain_below": weights.abstain_below,
              "firm_from": weights.firm_from, "select": dict(zip(SENTENCE, weights.select.round(3).tolist(),
                                                                  strict=True)),
              "decide": dict(zip((*DECISION, "bias"), weights.decide.round(3).tolist(), strict=True))}
    print(json.dumps(report, indent=1))
    if args.json:
        args.json.write_text(json.dumps(report, indent=1))
    if args.write:
        write(weights, names)
    return 0


if __name__ == "__main__":
    sys.exit(main())
