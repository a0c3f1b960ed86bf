"""Why a replayed case went wrong: the agent's own record of the call beside what the scorer heard.

A wrong answer on the wire has three possible authors: the agent misheard the question (`asr`),
heard it right and chose the wrong answer (`answer`), or answered right while the scorer's own
recogniser misheard the answer (`scorer`). A question the agent asked the caller to repeat is its own
outcome (`asked again`), neither right nor wrong. The agent's call records (GET /calls) say what it
heard and answered.
"""

from __future__ import annotations

from eval.agent_process import AgentProcess
from eval.retrieval import contains_any
from eval.scoring import normalize, word_error_rate


def agent_turns(agent: AgentProcess, sip_call_id: str | None, token: str) -> list[dict]:
    """The agent's own record of a call's turns (what it heard, answered and decided), [] if none."""
    if not sip_call_id:
        return []
    for call in agent.http("GET", "/calls?limit=500", token).json()["calls"]:
        if call["sip_call_id"] == sip_call_id:
            return agent.http("GET", f"/calls/{call['id']}", token).json()["turns"]
    return []


def join_agent_record(rows: list[dict], turns: list[dict]) -> None:
    """Put the agent's transcript, answer and outcome beside each scored case (turns and cases in order), and
    say why each miss happened: the agent misheard (`asr`), heard right but answered wrong (`answer`), asked
    the caller to repeat (`asked again`), or answered right and the scorer misheard it (`scorer`)."""
    for row, turn in zip(rows, turns, strict=False):
        row.update(agent_heard=turn["transcript"], agent_answer=turn["answer"], agent_outcome=turn["outcome"],
                   agent_asr_logprob=turn.get("hearing", {}).get("asr_logprob"))
        if row.get("correct") is False:
            row["cause"] = miss_cause(row)


def miss_cause(row: dict) -> str:
    if row.get("agent_outcome") == "asked again":
        return "asked again"
    said, heard, answer = row.get("question") or "", row.get("agent_heard") or "", row.get("agent_answer") or ""
    answer_right = ("don t have information" in normalize(answer)) if row["expect_abstain"] else \
        contains_any(answer, row["expect_any"])
    if answer_right:
        return "scorer"
    return "asr" if said and word_error_rate(said, heard) > 0 else "answer"
