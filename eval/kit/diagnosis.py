"""Why a replayed case went wrong: the agent's own record of the call beside what the scorer heard.

A wrong answer on the wire has three possible authors: the agent misheard the question (`asr`),
heard it right and chose the wrong answer (`answer`), or answered right while the scorer's own
recogniser misheard the answer (`scorer`). A question the agent asked the caller to repeat, or to confirm,
and that the caller left there is its own outcome (`asked again`), neither right nor wrong. The agent's call
records (GET /calls) say what it heard and answered.
"""

from __future__ import annotations

from pathlib import Path

from eval.kit.agent_process import AgentProcess
from eval.kit.scoring import contains_any, normalize, word_error_rate
from eval.kit.wire import latency_split


def agent_call(agent: AgentProcess, sip_call_id: str | None, token: str) -> dict:
    """The agent's own record of a call: its id, and its turns (what it heard, answered and decided); {} if none."""
    if not sip_call_id:
        return {}
    for call in agent.http("GET", "/calls?limit=500", token).json()["calls"]:
        if call["sip_call_id"] == sip_call_id:
            return agent.http("GET", f"/calls/{call['id']}", token).json()
    return {}


def _audio(audio_dir: Path | None, turn: dict) -> dict:
    path = audio_dir / f"{turn['n']:03d}.wav" if audio_dir is not None and "n" in turn else None
    return {"audio": str(path)} if path is not None and path.exists() else {}


ANSWERS = ("answered", "confirmed")
"""Agent turn outcomes that gave the caller an answer (or the KB's decline)."""
CLARIFICATIONS = ("asked again", "not confirmed", "confirming")


CUT_OFF = "cut off"
"""A turn the agent took back: the caller went on, and the next turn heard the question whole."""


def by_step(turns: list[dict]) -> list[list[dict]]:
    """The agent's turns, one group per step the caller said: a turn cut off belongs with the turn after it,
    which heard the same question whole."""
    groups: list[list[dict]] = []
    pending: list[dict] = []
    for turn in turns:
        pending.append(turn)
        if turn["outcome"] != CUT_OFF:
            groups.append(pending)
            pending = []
    return groups + [pending] if pending else groups


def join_agent_record(rows: list[dict], turns: list[dict], audio_dir: Path | None = None) -> None:
    """Put the agent's record beside each scored case: what it heard the question as, what it last answered, and
    the outcome, transcript and words of each of the case's turns (a case's steps and the agent's turns in order:
    the question, and the caller's repeats and yes or no when it answered a clarification; a turn cut off goes
    with the question's whole turn); say why each miss happened. `audio_dir`: the call's folder of the audio the
    agent kept of each turn (AGENT_TURN_AUDIO_DIR), named in each exchange where the turn's file is there."""
    steps = by_step(turns)
    for index, row in enumerate(rows):
        mine = [turn for i in row.get("steps", [index]) if i < len(steps) for turn in steps[i]]
        if not mine:
            continue
        heard = next((t for t in mine if t["outcome"] != CUT_OFF), mine[0])  # the question heard whole
        row.update(agent_started=mine[0]["started"], agent_heard=heard["transcript"], agent_answer=mine[-1]["answer"],
                   agent_outcome=mine[-1]["outcome"], agent_outcomes=[t["outcome"] for t in mine],
                   # Every exchange as the agent recorded it: a confirmation's topic, what a repeat was heard as.
                   agent_exchanges=[{"outcome": t["outcome"], "heard": t["transcript"], "said": t["answer"],
                                     **({"heard_again": True} if t.get("hearing", {}).get("heard_again") else {}),
                                     **_audio(audio_dir, t)} for t in mine],
                   agent_asr_logprob=heard.get("hearing", {}).get("asr_logprob"))
        row.update(_split(row, heard))
        answerer = mine[-1].get("hearing", {}).get("answerer")
        if answerer:  # who phrased the answer, when an LLM is set up (eval.replay --llm)
            row.update(agent_answerer=answerer, agent_llm_reason=mine[-1]["hearing"].get("llm_reason", ""),
                       llm_first_sentence_ms=mine[-1].get("latencies_ms", {}).get("llm_first_sentence_ms"))
        if row.get("correct") is False:
            row["cause"] = miss_cause(row)


def _split(row: dict, turn: dict) -> dict:
    """The latency of the reply to the whole question split into way in, agent and way out (eval.kit.wire), where the
    caller recorded its clock and the agent its end of speech and response; {} otherwise, and for a turn that
    ended before the question did (the agent took part of it for the whole, and the latency is another turn's)."""
    latencies = turn.get("latencies_ms", {})
    if row.get("latency_ms") is None or row.get("question_end_at") is None or \
            latencies.get("response_ms") is None or latencies.get("endpointing_ms") is None:
        return {}
    heard_end_at = turn["started"] - latencies["endpointing_ms"] / 1000
    if heard_end_at < row["question_end_at"]:
        return {}
    return latency_split(row["latency_ms"], row["question_end_at"], heard_end_at, latencies["response_ms"])


def miss_cause(row: dict) -> str:
    if row.get("agent_outcome") in CLARIFICATIONS:
        return "asked again"
    said, heard, answer = row.get("question") or "", row.get("agent_heard") or "", row.get("agent_answer") or ""
    answer_right = ("don t have information" in normalize(answer)) if row["expect_abstain"] else \
        contains_any(answer, row["expect_any"])
    if answer_right:
        return "scorer"
    return "asr" if said and word_error_rate(said, heard) > 0 else "answer"


def wrong_answer(row: dict) -> bool:
    """An answer whose content is wrong, or an out-of-KB question answered: not a decline, and not a question
    left on a clarification, nor one the scorer misheard."""
    if row.get("correct") is not False or (row.get("abstained") and not row["expect_abstain"]):
        return False
    if row.get("agent_outcome") is not None and row["agent_outcome"] not in ANSWERS:
        return False
    return row.get("cause") != "scorer"
