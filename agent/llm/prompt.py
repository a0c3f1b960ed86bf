"""What the language model is asked: the retrieved passages, the call so far and the question, and a short
answer for the ear from the passages only. Pure."""

from __future__ import annotations

from collections.abc import Sequence

from agent.knowledge.memory import Turn

SYSTEM = (
    "You answer a caller on the telephone for a business. Use only facts written in the passages. "
    "Answer in one or two short, plain sentences that sound natural spoken aloud: no lists, no markdown, "
    "no mention of passages. Copy numbers, prices, times, names and phone numbers exactly as the passages "
    "write them. If the passages do not answer the question, say: I don't know.")


def messages(question: str, passages: Sequence[str], history: Sequence[Turn] = ()) -> list[dict[str, str]]:
    """The chat for one question: the system rule, the call's earlier questions and answers, then the passages
    with the question."""
    chat = [{"role": "system", "content": SYSTEM}]
    for turn in history:
        chat += [{"role": "user", "content": turn.question}, {"role": "assistant", "content": turn.answer}]
    numbered = "\n".join(f"[{n}] {' '.join(text.split())}" for n, text in enumerate(passages, 1))
    chat.append({"role": "user", "content": f"Passages:\n{numbered}\n\nQuestion: {question}"})
    return chat
