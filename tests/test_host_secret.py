"""Learners sharing a machine: a lab HTTP server answers only the host that started it (its URL carries a secret no
other process was given), and the business systems a server makes are its owner's alone."""

from __future__ import annotations

import os
import stat
from pathlib import Path
from urllib.parse import parse_qs, urlsplit, urlunsplit

import httpx2
import psutil
import pytest
from mcp import Client

from labkit import Host, ServerSpec, Trace
from labkit.host import http_server

_INITIALIZE = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "stranger", "version": "0"}},
}


async def test_the_host_that_started_a_lab_server_calls_it_and_a_caller_without_its_url_secret_is_refused(
    tmp_path: Path,
) -> None:
    with http_server("logs", env={"LABKIT_DATA_DIR": str(tmp_path)}) as url:
        async with Client(url) as client:  # any MCP client given the URL, as notebook 04's bare SDK client is
            assert (await client.list_tools()).tools
        secret = parse_qs(urlsplit(url).query)["host_secret"][0]
        bare = urlunsplit(urlsplit(url)._replace(query=""))
        strangers = [bare, f"{bare}?host_secret=", f"{bare}?host_secret={secret[:-1]}", f"{bare}?token={secret}"]
        async with httpx2.AsyncClient(headers={"Accept": "application/json, text/event-stream"}) as http:
            for stranger in strangers:
                refused = await http.post(stranger, json=_INITIALIZE)
                assert refused.status_code == 403, (stranger, refused.text)
                assert "host_secret" in refused.text  # the refusal names what is missing
            assert (await http.post(url, json=_INITIALIZE)).status_code == 200
        # Another user sees every process's command line, not its environment: the secret is in neither's argv.
        for process in psutil.process_iter(["cmdline"]):
            assert secret not in " ".join(process.info["cmdline"] or [])


async def test_a_host_reaches_the_lab_http_servers_it_starts_as_it_reaches_them_over_stdio(tmp_path: Path) -> None:
    listed = {}
    for transport in ("stdio", "http"):
        spec = ServerSpec("logs", transport=transport, env={"LABKIT_DATA_DIR": str(tmp_path)})
        async with Host(Trace(), [spec]) as host:
            listed[transport] = sorted(tool.name for tool in host.tools)
    assert listed["http"] == listed["stdio"] != []


def test_the_data_folder_a_server_makes_is_its_owners_alone(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from servers._wiring import data_dir

    folder = tmp_path / "home" / ".mcp-lab-data"
    monkeypatch.setenv("LABKIT_DATA_DIR", str(folder))
    lenient = os.umask(0o022)  # the default, under which files and folders are readable by every user
    try:
        assert data_dir() == folder
    finally:
        os.umask(lenient)
    assert stat.S_IMODE(folder.stat().st_mode) == 0o700
