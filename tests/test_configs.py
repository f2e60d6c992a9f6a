"""Editors' MCP configs as users have them: each client's file format and variables, read and started for real."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import anyio
import pytest

from labkit import GatePolicy, Host, ServerSpec, Trace, http_server
from labkit._time_limits import scaled
from labkit.errors import ConfigError
from labkit.host import load_config, read_config, server_env
from labkit.processes import free_port, network_env

REPO = Path(__file__).resolve().parents[1]
ENV_SERVER = str(REPO / "replays" / "env_server.py")
ROOTS_SERVER = str(REPO / "tests" / "roots_server.py")
ALLOW = GatePolicy(approve_all=True)


def _write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


async def _started_with(host: Host, *names: str) -> dict[str, Any]:
    """What the env server reports: each variable's value, its folder and its command line."""
    seen: dict[str, Any] = {}
    for name in names:
        result = await host.call("started_with", {"name": name})
        assert not result.is_error, result.text
        report = json.loads(result.text)
        seen[name], seen["cwd"], seen["argv"] = report["value"], report["cwd"], report["argv"]
    return seen


@pytest.fixture
def lab_env(monkeypatch: pytest.MonkeyPatch) -> dict[str, str]:
    values = {"LAB_PYTHON": sys.executable, "LAB_SERVER": ENV_SERVER, "LAB_SECRET": "s3cret"}
    for name, value in values.items():
        monkeypatch.setenv(name, value)
    monkeypatch.delenv("LAB_UNSET", raising=False)
    return values


DISABLED = '"gone": {"command": "/no/such/program", "args": ["${LAB_UNSET}"], "disabled": true}'


async def test_claude_desktop(tmp_path: Path, lab_env: dict[str, str]) -> None:
    # Claude Desktop documents no variables: values are taken as written, and a disabled entry is skipped.
    config = _write(
        tmp_path / "claude_desktop_config.json",
        json.dumps(
            {
                "mcpServers": {
                    "env": {
                        "command": sys.executable,
                        "args": [ENV_SERVER, "--desktop"],
                        "env": {"LAB_VALUE": "plain"},
                    },
                    "gone": {"command": "/no/such/program", "disabled": True},
                },
                "globalShortcut": "",
            }
        ),
    )
    trace = Trace()
    with anyio.fail_after(30):
        async with Host.from_config(trace, config, policy=ALLOW) as host:
            seen = await _started_with(host, "LAB_VALUE")
    assert seen["LAB_VALUE"] == "plain" and seen["argv"] == ["--desktop"]
    assert [e.payload["server"] for e in trace.of_kind("host.note")] == ["gone"]


async def test_cursor(tmp_path: Path, lab_env: dict[str, str]) -> None:
    config = _write(
        tmp_path / ".cursor" / "mcp.json",
        """{"mcpServers": {
        "env": {"command": "${env:LAB_PYTHON}", "args": ["${env:LAB_SERVER}", "${userHome}", "${workspaceFolder}",
                "${workspaceFolderBasename}", "a${pathSeparator}b${/}c"],
                "env": {"LAB_VALUE": "${env:LAB_SECRET}", "EMPTY": "[${env:LAB_UNSET}]"}},
        <disabled>}}""".replace("<disabled>", DISABLED),
    )
    with anyio.fail_after(30):
        async with Host.from_config(Trace(), config, policy=ALLOW) as host:
            seen = await _started_with(host, "LAB_VALUE", "EMPTY")
    assert seen["LAB_VALUE"] == "s3cret" and seen["EMPTY"] == "[]"
    assert seen["argv"] == [str(Path.home()), str(tmp_path.resolve()), tmp_path.name, f"a{os.sep}b{os.sep}c"]


async def test_vscode_jsonc_inputs_and_env_file(tmp_path: Path, lab_env: dict[str, str]) -> None:
    _write(tmp_path / ".env", '# a comment\nFROM_FILE="from the file"  # and another\nLAB_VALUE=overridden\n')
    config = _write(
        tmp_path / ".vscode" / "mcp.json",
        """// VS Code's own format: JSON with comments
    {
      "inputs": [
        {"type": "promptString", "id": "api-key", "description": "API key", "password": true},
        {"type": "pickString", "id": "level", "description": "Level", "options": ["low", "high"], "default": "low"},
      ],
      "servers": {
        /* a stdio server */
        "env": {
          "type": "stdio",
          "command": "${env:LAB_PYTHON}",
          "args": ["${env:LAB_SERVER}", "--level=${input:level}", "http://not-a-comment//x"],
          "envFile": "${workspaceFolder}/.env",
          "env": {"LAB_VALUE": "${input:api-key}"},  // env wins over envFile
          "cwd": "${workspaceFolder}",
        },
        <disabled>,
      },
    }""".replace("<disabled>", DISABLED),
    )
    asked: list[tuple[str, dict[str, Any]]] = []

    async def user(message: str, schema: dict[str, Any]) -> dict[str, Any]:
        asked.append((message, schema))
        return {"api-key": "typed-by-user", "level": "high"}

    trace = Trace()
    with anyio.fail_after(30):
        async with Host.from_config(trace, config, policy=ALLOW, elicit=user) as host:
            seen = await _started_with(host, "LAB_VALUE", "FROM_FILE")
    assert seen["LAB_VALUE"] == "typed-by-user" and seen["FROM_FILE"] == "from the file"
    assert seen["argv"] == ["--level=high", "http://not-a-comment//x"] and seen["cwd"] == str(tmp_path.resolve())
    [(message, schema)] = asked
    assert "mcp.json" in message and "api-key" in message
    assert set(schema["required"]) == {"api-key", "level"} and schema["properties"]["level"]["enum"] == ["low", "high"]
    assert schema["properties"]["api-key"]["writeOnly"] is True
    asked_events = trace.of_kind("host.form", "user.answer")
    # in order of use; the ids, never the values
    assert [e.payload for e in asked_events] == [{"inputs": ["level", "api-key"]}] * 2


async def test_windsurf_server_url(tmp_path: Path, lab_env: dict[str, str], monkeypatch: pytest.MonkeyPatch) -> None:
    with http_server("logs") as url:
        monkeypatch.setenv("LAB_PORT", str(urlsplit(url).port))
        monkeypatch.setenv("LAB_QUERY", urlsplit(url).query)  # the server's secret: only its host may call it
        config = _write(
            tmp_path / "mcp_config.json",
            """{"mcpServers": {
            "logs": {"serverUrl": "http://127.0.0.1:${env:LAB_PORT}/mcp?${env:LAB_QUERY}",
                     "headers": {"X-Team": "${env:LAB_SECRET}"}},
            "env": {"command": "${env:LAB_PYTHON}", "args": ["${env:LAB_SERVER}"],
                    "env": {"LAB_VALUE": "${env:LAB_SECRET}"},
                    "disabled": false},
            <disabled>}}""".replace("<disabled>", DISABLED),
        )
        trace = Trace()
        with anyio.fail_after(30):
            async with Host.from_config(trace, config, policy=ALLOW) as host:
                seen = await _started_with(host, "LAB_VALUE")
                logs = await host.call("query_errors", {"service": "order-service", "since": "2026-10-29T20:00"})
    assert seen["LAB_VALUE"] == "s3cret" and not logs.is_error
    assert any(e.meta["server"] == "logs" for e in trace.of_kind("http.response"))


async def test_claude_code(tmp_path: Path, lab_env: dict[str, str], monkeypatch: pytest.MonkeyPatch) -> None:
    config = _write(
        tmp_path / ".mcp.json",
        """{"mcpServers": {
        "env": {"type": "stdio", "command": "${LAB_PYTHON}", "args": ["${LAB_SERVER}", "${LAB_UNSET:-fallback}"],
                "env": {"LAB_VALUE": "${LAB_SECRET:-unused}", "EMPTY_DEFAULT": "${LAB_EMPTY:-was empty}"}},
        <disabled>}}""".replace("<disabled>", DISABLED),
    )
    monkeypatch.setenv("LAB_EMPTY", "")
    with anyio.fail_after(30):
        async with Host.from_config(Trace(), config, policy=ALLOW) as host:
            seen = await _started_with(host, "LAB_VALUE", "EMPTY_DEFAULT")
    assert seen["LAB_VALUE"] == "s3cret" and seen["EMPTY_DEFAULT"] == "was empty" and seen["argv"] == ["fallback"]


@pytest.fixture
def sse_server() -> Iterator[str]:
    port = free_port()
    process = subprocess.Popen([sys.executable, ROOTS_SERVER, "--sse", "--port", str(port)], stderr=subprocess.DEVNULL)
    try:
        with anyio.from_thread.start_blocking_portal() as portal:
            portal.call(_wait_for_port, port)
        yield f"http://127.0.0.1:{port}/sse"
    finally:
        process.terminate()
        process.wait(10)


async def _wait_for_port(port: int) -> None:
    with anyio.fail_after(scaled(20)):
        while True:
            try:
                await (await anyio.connect_tcp("127.0.0.1", port)).aclose()
                return
            except OSError:
                await anyio.sleep(0.05)


@pytest.mark.parametrize("era", ["2026-07-28", "2025-11-25"])
async def test_type_sse_goes_through_the_legacy_sse_client_and_roots_are_the_workspace(
    tmp_path: Path, sse_server: str, era: str
) -> None:
    document = {"servers": {"old": {"type": "sse", "url": sse_server}}}
    config = _write(tmp_path / ".vscode" / "mcp.json", json.dumps(document))
    trace = Trace()
    with anyio.fail_after(30):
        async with Host.from_config(trace, config, policy=ALLOW, era=era) as host:
            roots = await host.call("roots", {})
    assert not roots.is_error and roots.text == tmp_path.resolve().as_uri()
    methods = {e.payload["method"] for e in trace.of_kind("http.request")}
    assert methods == {"GET", "POST"}  # the event stream, and each message posted to the endpoint it named


@pytest.mark.parametrize("era", ["2026-07-28", "2025-11-25"])
async def test_a_capability_the_host_does_not_offer_is_named(era: str) -> None:
    spec = ServerSpec("roots", command=sys.executable, args=(ROOTS_SERVER,))
    with anyio.fail_after(30):
        async with Host(Trace(), [spec], era=era, policy=ALLOW, roots=()) as host:
            sampled = await host.call("summarise", {"text": "hi"})
            roots = await host.call("roots", {})
    assert sampled.is_error and "sampling, a client capability this host does not offer" in sampled.text
    assert roots.is_error and "roots, a client capability this host does not offer" in roots.text
    assert "refused" not in sampled.text + roots.text


def test_every_documented_variable_form_and_the_unsupported_ones(tmp_path: Path, lab_env: dict[str, str]) -> None:
    def one(arg: str, **options: Any) -> str:
        document = {"servers": {"s": {"command": "x", "args": [arg]}}}
        return load_config(_write(tmp_path / "c.json", json.dumps(document)), workspace=tmp_path, **options)[0].args[0]

    assert one("${LAB_SECRET}/${env:LAB_SECRET}/${LAB_UNSET:-d}") == "s3cret/s3cret/d"
    assert one("$LAB_SECRET and $${LAB_SECRET") == "$LAB_SECRET and $${LAB_SECRET"  # no bare $NAME, no unclosed ${
    for bad, named in [
        ("${LAB_UNSET}", "LAB_UNSET} is not set"),
        ("${command:pick}", "${command:pick} is not a variable"),
        ("${config:editor.x}", "${config:editor.x} is not"),
        ("${file}", "${file} is not"),
        ("${input:key}", "${input:key} has no answer"),
        ("${env:}", "${env:} is not"),
    ]:
        with pytest.raises(ConfigError, match=named.replace("$", r"\$").replace("{", r"\{").replace("}", r"\}")):
            one(bad)


@pytest.mark.parametrize(
    ("entry", "named"),
    [
        ({"command": "x", "type": "websocket"}, "type 'websocket' is not supported"),
        ({"command": "x", "oauth": {"clientId": "a"}}, "does not support 'oauth'"),
        ({"command": "x", "disabledTools": ["a"]}, "does not support 'disabledTools'"),
        ({"command": "x", "type": "http"}, "type 'http' needs a 'url'"),
        ({"url": "http://h/mcp", "command": "x"}, "not both"),
        ({"command": "x", "disabled": "yes"}, "'disabled' must be true or false"),
        ({"command": "x", "envFile": "missing.env"}, "envFile .*missing.env does not exist"),
    ],
)
def test_what_the_host_cannot_honour_is_refused_by_name(tmp_path: Path, entry: dict, named: str) -> None:
    path = _write(tmp_path / "mcp.json", json.dumps({"mcpServers": {"s": entry}}))
    with pytest.raises(ConfigError, match=named):
        load_config(path)


def test_display_only_keys_are_accepted_and_a_disabled_entry_is_never_checked(tmp_path: Path) -> None:
    path = _write(
        tmp_path / "mcp.json",
        json.dumps(
            {
                "mcpServers": {
                    "s": {"command": "x", "description": "d", "autoApprove": ["a"], "alwaysAllow": ["b"]},
                    "off": {"disabled": True, "type": "websocket", "whatever": 1},
                }
            }
        ),
    )
    config = read_config(path)
    assert list(config.entries) == ["s"] and config.disabled == ("off",)


@pytest.mark.parametrize(
    "text",
    [
        '{"servers": {"s": {"command": "x", "args": ["a // b", "/* c */"],},},}',
        '/* lead */ {"servers": /* mid */ {"s": {"command": "x", "args": ["a // b", "/* c */"]}}} // tail',
        (
            '{\n  // "servers": {"t": {"command": "y"}},\n'
            '  "servers": {"s": {"command": "x", "args": ["a // b", "/* c */"]}}\n}'
        ),
    ],
)
def test_jsonc_comments_and_trailing_commas_but_never_inside_strings(tmp_path: Path, text: str) -> None:
    [spec] = load_config(_write(tmp_path / "mcp.json", text))
    assert spec.name == "s" and spec.args == ("a // b", "/* c */")


def test_an_input_the_config_does_not_declare_or_cannot_ask_is_named(tmp_path: Path) -> None:
    path = _write(
        tmp_path / "mcp.json", json.dumps({"inputs": [{"type": "command", "id": "c", "command": "x"}], "servers": {}})
    )
    with pytest.raises(ConfigError, match="input 'c' has type 'command'"):
        read_config(path)
    path = _write(tmp_path / "mcp.json", json.dumps({"servers": {"s": {"command": "${input:nope}"}}}))
    with pytest.raises(ConfigError, match=r"\$\{input:nope\}, which the config's \"inputs\" do not declare"):
        read_config(path).needed_inputs()


def test_networking_variables_reach_foreign_servers_and_credentials_do_not(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SSL_CERT_FILE", "/etc/ca.pem")
    monkeypatch.setenv("HTTPS_PROXY", "http://proxy:3128")
    monkeypatch.setenv("no_proxy", "localhost,127.0.0.1")
    monkeypatch.setenv("HTTP_PROXY", "http://user:secret@proxy:3128")
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-never")
    foreign = server_env(ServerSpec("x", command="uvx"))
    passed = {"SSL_CERT_FILE": "/etc/ca.pem", "HTTPS_PROXY": "http://proxy:3128"}
    assert passed.items() <= foreign.items()
    # the user's exceptions reach it, with the loopback names the host adds so that no proxy sees loopback traffic
    assert {"localhost", "127.0.0.1"} <= set(foreign["no_proxy"].split(","))
    assert "HTTP_PROXY" not in foreign and "ANTHROPIC_API_KEY" not in foreign
    assert "SSL_CERT_FILE" not in server_env(ServerSpec("logs"))  # the lab's own servers are offline
    assert network_env({"ALL_PROXY": "socks5://u@h:1", "NO_PROXY": "a@b"}) == {}


async def test_a_real_foreign_server_sees_the_ca_bundle(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("REQUESTS_CA_BUNDLE", "/etc/corporate-ca.pem")
    with anyio.fail_after(30):
        async with Host(Trace(), [ServerSpec("env", command=sys.executable, args=(ENV_SERVER,))], policy=ALLOW) as host:
            seen = await _started_with(host, "REQUESTS_CA_BUNDLE")
    assert seen["REQUESTS_CA_BUNDLE"] == "/etc/corporate-ca.pem"
