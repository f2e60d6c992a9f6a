"""A client's website over HTTPS on 127.0.0.1: the JSON documents of one folder, among them the host's client ID
metadata document (notebook 09), each served with `Cache-Control: max-age` so that whoever fetches it may cache it.

`--folder` holds the documents (`<folder>/a/b.json` is served at `/a/b.json`); a document published with an answer
of its own has it beside it (`<folder>/a/b.json.http`: `{"status": 302, "headers": {"Location": ...}}`, its headers
instead of the default `Cache-Control`). `--cert` and `--key` are the server's certificate and key (the lab makes
them with a throwaway authority, `labkit.processes.LocalCA`).
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import PlainTextResponse, Response
from starlette.routing import Route

from ._wiring import add_http_flags, http_port, serve_http

ANSWER_SUFFIX = ".http"
"""Beside a document, the status and headers it is served with, when not 200 and the default caching."""


def build_app(folder: Path, max_age: int) -> Starlette:
    root = folder.resolve()

    async def document(request: Request) -> Response:
        path = (root / request.path_params["path"]).resolve()
        if path.suffix != ".json" or not path.is_relative_to(root) or not path.is_file():
            return PlainTextResponse("no such document", status_code=404)
        answer = path.with_name(path.name + ANSWER_SUFFIX)
        told = json.loads(answer.read_text()) if answer.is_file() else {}
        headers = told["headers"] if told.get("headers") is not None else {"Cache-Control": f"max-age={max_age}"}
        return Response(path.read_bytes(), told.get("status", 200), headers, media_type="application/json")

    return Starlette(routes=[Route("/{path:path}", document, methods=["GET"])])


def main() -> None:
    parser = argparse.ArgumentParser()
    add_http_flags(parser, default_port=9443)  # `--http` as every lab server's; it serves HTTPS only
    parser.add_argument("--folder", type=Path, required=True, help="the folder of JSON documents served")
    parser.add_argument("--cert", required=True, help="the server's certificate (PEM)")
    parser.add_argument("--key", required=True, help="the certificate's private key (PEM)")
    parser.add_argument("--max-age", type=int, default=300, help="seconds a fetcher may cache a document")
    options = parser.parse_args()
    port = http_port(options.port, options.fd)
    serve_http(build_app(options.folder, options.max_age), port, options.fd, "warning", (options.cert, options.key))


if __name__ == "__main__":
    main()
