"""A streamed chat completion from an OpenAI-compatible server (vLLM, Ollama, llama.cpp, a hosted endpoint).

`ChatClient.stream(messages)` yields the answer's text as it arrives; cancelling the task that reads it
closes the HTTP stream (barge-in stops the server's work too). Anything that is not a well-formed event
stream of chat chunks raises LlmError, so a broken server is never taken for an empty answer.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from dataclasses import dataclass

import httpx

DONE = object()
"""The stream's end marker ("data: [DONE]")."""


class LlmError(Exception):
    """The server failed, refused, or sent something that is not a chat completion stream."""


@dataclass(frozen=True)
class LlmConfig:
    url: str
    """Base URL, up to and including /v1."""
    model: str
    api_key: str | None = None
    connect_s: float = 1.0
    read_s: float = 5.0
    max_tokens: int = 120
    temperature: float = 0.0
    """Greedy: the same question gets the same phrasing, and the check judges what a caller would hear again."""


def event_text(line: str) -> str | object | None:
    """One line of a server-sent event stream: the text it adds, DONE at the end, None for nothing (blank lines,
    comments, the role announcement). Raises LlmError for anything else."""
    line = line.strip()
    if not line or line.startswith(":") or line.startswith(("event:", "id:", "retry:")):
        return None
    if not line.startswith("data:"):
        raise LlmError(f"not an event stream: {line[:60]!r}")
    data = line[5:].strip()
    if data == "[DONE]":
        return DONE
    try:
        chunk = json.loads(data)
    except json.JSONDecodeError:
        raise LlmError(f"not JSON: {data[:60]!r}") from None
    if not isinstance(chunk, dict):
        raise LlmError(f"not a chat chunk: {data[:60]!r}")
    if "error" in chunk:
        raise LlmError(f"server error: {str(chunk['error'])[:120]}")
    choices = chunk.get("choices")
    if not isinstance(choices, list):
        raise LlmError(f"no choices: {data[:60]!r}")
    if not choices:
        return None  # a usage-only chunk
    delta = choices[0].get("delta") if isinstance(choices[0], dict) else None
    content = delta.get("content") if isinstance(delta, dict) else None
    if content is not None and not isinstance(content, str):
        raise LlmError(f"content is not text: {data[:60]!r}")
    return content or None


class ChatClient:
    """One HTTP connection pool to the server, shared by every call."""

    def __init__(self, config: LlmConfig) -> None:
        self.config = config
        self._client: httpx.AsyncClient | None = None

    def _http(self) -> httpx.AsyncClient:
        if self._client is None:
            c = self.config
            headers = {"Authorization": f"Bearer {c.api_key}"} if c.api_key else {}
            self._client = httpx.AsyncClient(headers=headers, timeout=httpx.Timeout(
                connect=c.connect_s, read=c.read_s, write=c.read_s, pool=c.connect_s))
        return self._client

    async def stream(self, messages: list[dict[str, str]]) -> AsyncIterator[str]:
        c = self.config
        body = {"model": c.model, "messages": messages, "stream": True, "max_tokens": c.max_tokens,
                "temperature": c.temperature}
        try:
            async with self._http().stream("POST", c.url.rstrip("/") + "/chat/completions", json=body) as response:
                if response.status_code != 200:
                    detail = (await response.aread())[:120].decode("utf-8", "replace")
                    raise LlmError(f"HTTP {response.status_code}: {detail}")
                async for line in response.aiter_lines():
                    text = event_text(line)
                    if text is DONE:
                        return
                    if text is not None:
                        yield text
        except httpx.TimeoutException as exc:
            raise LlmError(f"timed out ({type(exc).__name__})") from None
        except httpx.HTTPError as exc:
            raise LlmError(f"{type(exc).__name__}: {exc}"[:160]) from None

    async def close(self) -> None:
        if self._client is not None:
            await self._client.aclose()
            self._client = None
