"""The host with servers nobody here wrote: `mcpServers` configs, any stdio command, a URL; failures that explain."""

from __future__ import annotations

import json
from pathlib import Path

import anyio
import pytest

from labkit import Host, ServerSpec, ServerStartError, Trace, http_server
from labkit.host import ERAS, load_config, specs_from_config
from tests.servers_helpers import TIME_SERVER

CONVERT = {"source_timezone": "Europe/London", "time": "09:00", "target_timezone": "Asia/Tokyo"}


def _config(tmp_path: Path, servers: dict) -> Path:
    path = tmp_path / "claude_desktop_config.json"
    path.write_text(json.dumps({"mcpServers": servers}), encoding="utf-8")
    return path


@pytest.mark.parametrize("era", sorted(ERAS))
async def test_a_pypi_server_from_an_mcpservers_config_is_listed_and_called(tmp_path: Path, era: str) -> None:
    config = _config(tmp_path, {"time": {"command": TIME_SERVER, "args": ["--local-timezone", "UTC"]}})
    trace = Trace()
    with anyio.fail_after(30):
        async with Host.from_config(trace, config, era=era) as host:
            assert {t.name for t in host.tools} >= {"get_current_time", "convert_time"}
            result = await host.call("convert_time", CONVERT)
    assert not result.is_error and json.loads(result.text)["target"]["timezone"] == "Asia/Tokyo"
    requests = [e for e in trace.of_kind("jsonrpc.request") if e.src == "client"]
    assert [e.name for e in requests if e.name in ("tools/list", "convert_time")] == ["tools/list", "convert_time"]
    assert all(e.meta["server"] == "time" for e in requests)
    assert ("initialize" in {e.name for e in requests}) == (era == "2025-11-25")


async def test_a_lab_server_over_http_by_url(tmp_path: Path) -> None:
    with http_server("logs") as url:
        config = _config(tmp_path, {"ops-logs": {"url": url, "headers": {"X-Team": "ops"}}})
        trace = Trace()
        with anyio.fail_after(30):
            async with Host.from_config(trace, config) as host:
                result = await host.call("query_errors", {"service": "order-service", "since": "2026-10-29T20:00"})
    assert not result.is_error and json.loads(result.text)["total"] > 0
    posts = [e for e in trace.of_kind("http.request") if e.meta["server"] == "ops-logs"]
    assert posts and any(e.name == "query_errors" for e in trace.of_kind("jsonrpc.request"))


async def test_a_misspelled_command_names_itself_and_its_cause(tmp_path: Path) -> None:
    config = _config(tmp_path, {"time": {"command": "mcp-server-tme", "args": ["--local-timezone", "UTC"]}})
    with anyio.fail_after(10), pytest.raises(ServerStartError) as caught:
        async with Host.from_config(Trace(), config):
            pass
    error = caught.value
    assert error.server == "time" and "mcp-server-tme" in error.command and "mcp-server-tme" in str(error)
    assert error.error is not None and "No such file" in str(error)


async def test_a_server_that_exits_early_shows_its_status_and_stderr() -> None:
    with anyio.fail_after(10), pytest.raises(ServerStartError) as caught:
        async with Host(Trace(), [ServerSpec("mcp-server-time")]):
            pass
    error = caught.value
    assert error.returncode == 1 and "No module named servers.mcp-server-time" in error.stderr
    assert "mcp-server-time" in str(error) and "Connection closed" not in str(error)


async def test_an_http_lab_server_that_cannot_start_says_why() -> None:
    with pytest.raises(ServerStartError) as caught, http_server("no_such_server"):
        pass
    assert caught.value.returncode == 1 and "servers.no_such_server" in caught.value.stderr


def test_config_entries_are_read_in_order_with_every_field(tmp_path: Path) -> None:
    specs = specs_from_config(
        {
            "servers": {
                "git": {"command": "uvx", "args": ["mcp-server-git"], "env": {"GIT_DIR": "/tmp"}, "cwd": "/tmp"},
                "web": {"url": "http://127.0.0.1:9/mcp", "headers": {"Authorization": "Bearer x"}},
            }
        }
    )
    assert [s.name for s in specs] == ["git", "web"]
    assert specs[0] == ServerSpec("git", command="uvx", args=("mcp-server-git",), env={"GIT_DIR": "/tmp"}, cwd="/tmp")
    assert specs[1].transport == "http" and specs[1].headers == {"Authorization": "Bearer x"}


@pytest.mark.parametrize(
    ("document", "named"),
    [
        ({"mcpServers": {"a": {"args": []}}}, "server 'a' needs a 'command'"),
        ({"mcpServers": {"a": {"command": "x", "args": "--flag"}}}, "'args' must be a list"),
        ({"mcpServers": {"a": {"command": "x", "env": {"N": 1}}}}, "must map names to strings"),
        ({"mcpServers": {"a": "x"}}, "must be an object"),
        ({"tools": {}}, "has no 'mcpServers' or 'servers' object"),
    ],
)
def test_a_bad_config_entry_is_named(document: dict, named: str) -> None:
    with pytest.raises(ValueError, match=named.replace("(", r"\(")):
        specs_from_config(document)


def test_a_config_file_that_is_missing_or_not_json_says_so(tmp_path: Path) -> None:
    with pytest.raises(FileNotFoundError, match=r"no MCP config file"):
        load_config(tmp_path / "absent.json")
    (tmp_path / "bad.json").write_text("{mcpServers:", encoding="utf-8")
    with pytest.raises(ValueError, match=r"bad.json is not valid JSON"):
        load_config(tmp_path / "bad.json")


def test_a_transport_that_does_not_exist_lists_the_ones_that_do() -> None:
    with pytest.raises(ValueError, match=r"transport must be one of stdio, http, sse, not 'htp'"):
        ServerSpec("charts", transport="htp")
