"""Headless Chromium driven over the DevTools protocol: a real browser whose microphone plays a WAV file.

The microphone is Chromium's fake capture device fed from a file (no loop), the permission prompt is
answered yes, and loopback is allowed in peer connections: the agent offers 127.0.0.1 only, so every
packet of the call goes to a loopback address.
"""

from __future__ import annotations

import itertools
import json
import subprocess
import time
import urllib.request
from pathlib import Path

from websockets.sync.client import connect


class Chromium:
    def __init__(self, profile: Path, microphone: Path, port: int) -> None:
        self.process = subprocess.Popen(
            ["chromium", "--headless", "--no-sandbox", "--disable-gpu", f"--user-data-dir={profile}",
             f"--remote-debugging-port={port}", "--remote-debugging-address=127.0.0.1",
             "--use-fake-ui-for-media-stream", "--use-fake-device-for-media-stream",
             f"--use-file-for-fake-audio-capture={microphone}%noloop", "--allow-loopback-in-peer-connection",
             "--autoplay-policy=no-user-gesture-required", "--no-first-run", "about:blank"],
            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        self._ids = itertools.count(1)
        self._socket = connect(self._page_socket(port), open_timeout=10, max_size=None, legacy=True)

    def _page_socket(self, port: int) -> str:
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            try:
                with urllib.request.urlopen(f"http://127.0.0.1:{port}/json/list", timeout=2) as response:
                    pages = [t for t in json.load(response) if t["type"] == "page"]
                if pages:
                    return pages[0]["webSocketDebuggerUrl"]
            except OSError:
                pass
            if self.process.poll() is not None:
                raise RuntimeError(f"chromium exited: {self.process.stderr.read()[-2000:]}")
            time.sleep(0.2)
        raise TimeoutError("chromium's DevTools endpoint did not come up")

    def command(self, method: str, **params) -> dict:
        sent = next(self._ids)
        self._socket.send(json.dumps({"id": sent, "method": method, "params": params}))
        while True:
            message = json.loads(self._socket.recv(timeout=30))
            if message.get("id") == sent:
                if "error" in message:
                    raise RuntimeError(f"{method}: {message['error']}")
                return message["result"]

    def open(self, url: str) -> None:
        self.command("Page.enable")
        self.command("Page.navigate", url=url)
        self.wait_for("document.readyState === 'complete' && !!document.getElementById('call')", timeout=20)

    def evaluate(self, expression: str):
        """The value of a JavaScript expression in the page (promises awaited)."""
        result = self.command("Runtime.evaluate", expression=expression, awaitPromise=True, returnByValue=True)
        if "exceptionDetails" in result:
            raise RuntimeError(f"{expression}: {result['exceptionDetails']}")
        return result["result"].get("value")

    def wait_for(self, expression: str, timeout: float):
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            value = self.evaluate(expression)
            if value:
                return value
            time.sleep(0.25)
        raise TimeoutError(f"waited {timeout} s for {expression}; status: {self.evaluate(STATUS)}")

    def close(self) -> None:
        self._socket.close()
        self.process.kill()
        self.process.wait()


STATUS = "document.getElementById('status').textContent"
