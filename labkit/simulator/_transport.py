"""The simulated model as an httpx2 transport: real SDK clients talk to it with no socket at all."""

from __future__ import annotations

import httpx2

from ._handler import TeachingModel

__all__ = ["teaching_transport"]


def teaching_transport(model: TeachingModel | None = None) -> httpx2.MockTransport:
    """A transport for `httpx2.Client` and `httpx2.AsyncClient` that answers as the teaching model (notebook 01)."""
    model = model or TeachingModel()

    def answer(request: httpx2.Request) -> httpx2.Response:
        reply = model.handle(request.method, request.url.path, dict(request.headers), request.content)
        return httpx2.Response(reply.status, headers=reply.headers, content=reply.body)

    return httpx2.MockTransport(answer)
