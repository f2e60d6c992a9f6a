"""An auth-enabled lab server for the harness's server mode: `python .ci/conformance_protected.py SERVER PORT`.

Starts the lab's authorization server and SERVER as a protected resource (notebook 09's setup), signs alice in
through the host's OAuth client, and serves on 127.0.0.1 a forwarder to SERVER that sends each request with her
access token, listening on PORT (its URL: http://127.0.0.1:PORT/mcp) until stopped (SIGTERM). The
harness's server mode has no way to present a token, so the forwarder is its OAuth client: the server checks
every request's token (audience, expiry, scopes) as it would anyone's, and its answers come back unchanged.
"""

from __future__ import annotations

import sys
from typing import Any

import anyio
import httpx2
import uvicorn
from starlette.applications import Starlette
from starlette.background import BackgroundTask
from starlette.requests import Request
from starlette.responses import StreamingResponse
from starlette.routing import Route

from labkit.host import GatePolicy, Host, SignIn
from labkit.lessons._remote import authorization_server
from labkit.processes import ServerSpec, http_server
from labkit.server_contract import AUTH_ISSUER_ENV
from labkit.trace import Trace

HOP_BY_HOP = {"connection", "keep-alive", "transfer-encoding", "te", "trailer", "upgrade", "content-length"}


async def allow(message: str, schema: dict[str, Any]) -> dict[str, Any]:
    return {"allow": True}


async def access_token(server: str, url: str) -> str:
    sign_in = SignIn(allow, user="alice")
    async with Host(Trace(), [ServerSpec(server, url=url)], sign_in=sign_in, policy=GatePolicy()):
        tokens = sign_in.stores[server].tokens
    assert tokens is not None, "the sign-in gave no token"
    return tokens.access_token


def forwarder(target: str, token: str) -> Starlette:
    upstream = httpx2.AsyncClient(timeout=httpx2.Timeout(30.0, read=300.0))
    base = httpx2.URL(target)

    async def forward(request: Request) -> StreamingResponse:
        # Host and Origin as the harness sent them: the server's own DNS-rebinding checks see what the harness meant.
        headers = [(k, v) for k, v in request.headers.items() if k not in HOP_BY_HOP and k != "authorization"]
        query = "&".join(part for part in (base.query.decode(), request.url.query) if part)
        answer = await upstream.send(
            upstream.build_request(
                request.method,
                base.copy_with(path=request.url.path, query=query.encode()),
                headers=[*headers, ("authorization", f"Bearer {token}")],
                content=await request.body(),
            ),
            stream=True,
        )
        return StreamingResponse(
            answer.aiter_raw(),
            status_code=answer.status_code,
            headers={k: v for k, v in answer.headers.items() if k not in HOP_BY_HOP},
            background=BackgroundTask(answer.aclose),
        )

    methods = ["GET", "POST", "DELETE", "OPTIONS", "PUT", "PATCH", "HEAD"]
    return Starlette(routes=[Route("/{path:path}", forward, methods=methods)])


def main(server: str, port: str) -> None:
    with authorization_server() as issuer, http_server(server, env={AUTH_ISSUER_ENV: issuer}) as url:
        # Protected indeed: without a token the server answers 401 and names its metadata (RFC 9728).
        refused = httpx2.post(url, json={}, headers={"accept": "application/json, text/event-stream"}, timeout=30)
        if refused.status_code != 401 or "resource_metadata" not in refused.headers.get("www-authenticate", ""):
            sys.exit(f"{server} is not protected: HTTP {refused.status_code} to a request without a token")
        token = anyio.run(access_token, server, url)
        uvicorn.run(forwarder(url, token), host="127.0.0.1", port=int(port), log_level="warning")


if __name__ == "__main__":
    main(*sys.argv[1:3])
