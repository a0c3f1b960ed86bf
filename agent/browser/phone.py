"""The browser phone's signalling: the page (page.html) posts its SDP offer, the agent answers it and runs
the call (agent/browser/call.py) like any other, admitted by the same limits as a SIP call."""

from __future__ import annotations

import asyncio
from pathlib import Path

from agent.browser.call import BrowserCall

PAGE = (Path(__file__).parent / "page.html").read_text(encoding="utf-8")
"""Plain HTML and JavaScript, served by the agent itself: nothing comes from a CDN."""


class CallRefused(Exception):
    """The agent cannot take the call now (its limits); the message says why (sent back as a 503)."""


class BrowserPhone:
    """Answers page offers; each answered one runs as a call in the background until either side ends it."""

    def __init__(self) -> None:
        self._calls: set[asyncio.Task] = set()

    async def call(self, offer: object, open_call, remote: str, dialed: str) -> dict:
        """The SDP answer for `offer` once the call is admitted (`open_call(call)` runs a call to its end, or
        returns at once why it cannot be taken). Raises OfferError or CallRefused."""
        call = BrowserCall(remote, dialed)
        try:
            answer = await call.answer(offer)
        except BaseException:
            await call.close()
            raise
        running = asyncio.create_task(open_call(call))
        started = asyncio.create_task(call.running.wait())
        await asyncio.wait([running, started], return_when=asyncio.FIRST_COMPLETED)
        started.cancel()
        if running.done():
            await call.close()
            raise CallRefused(running.result() or "the call ended before it began")
        self._calls.add(running)
        running.add_done_callback(self._calls.discard)
        return answer
