"""An OpenAI-compatible endpoint of our own on 127.0.0.1: the simulator behind a real socket, in its own process.

It stands in for any local model server (vLLM, llama.cpp's server, Ollama's /v1): the lab reaches it only
through `LABKIT_MODEL=openai:<model>` and the SDK's own `OPENAI_BASE_URL`. Lesson scripts are off, so only
the simulator's rules decide, as for a model that knows no lesson. Prints its base URL, then serves until killed.
"""

from __future__ import annotations

import signal
import sys
from collections.abc import Mapping

from labkit.simulator import TeachingModel, TeachingServer


class _RulesOnly(TeachingModel):
    def handle(self, method: str, path: str, headers: Mapping[str, str], body: bytes):  # type: ignore[no-untyped-def]
        return super().handle(method, path, {**headers, "x-teaching-scenario": "none"}, body)


if __name__ == "__main__":
    server = TeachingServer(_RulesOnly()).start()
    print(f"{server.url}/v1", flush=True)
    signal.sigwait({signal.SIGTERM, signal.SIGINT})
    server.stop()
    sys.exit(0)
