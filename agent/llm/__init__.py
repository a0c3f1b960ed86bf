"""An optional language model that phrases answers: an OpenAI-compatible chat client, the prompt, and a breaker
that stops asking a failing server. The call path's use of it, with the grounding check and the deadline, is
agent/call/speaking/phrase.py."""
