"""Lab servers forked by the host's warm Python: the same server, environment, folder and endings as a cold start."""

from __future__ import annotations

import os
import signal
import stat
import subprocess
import sys
from typing import Any

import anyio
import psutil
import pytest
from jupyter_client.manager import start_new_kernel
from mcp import Client
from mcp.client.stdio import stdio_client

from labkit.host import REPO_ROOT, ServerSpec, http_server, stdio_params
from labkit.processes._warm import WARM_START_ENV, warm_python_pid

LIMIT = 60
ENV_SERVER = "replays.env_server"


async def _started_with(spec: ServerSpec, name: str) -> dict[str, Any]:
    """What the server reports, and (asked while it runs) its own and its parent's command line."""
    with anyio.fail_after(LIMIT):
        async with Client(stdio_client(stdio_params(spec))) as client:
            seen = (await client.call_tool("started_with", {"name": name})).structured_content
            server = psutil.Process(seen["pid"])
            return {**seen, "cmdline": server.cmdline(), "parent": server.parent().cmdline()}


async def test_a_lab_server_is_forked_by_the_warm_python_and_shows_its_own_command_line() -> None:
    with anyio.fail_after(LIMIT):
        async with Client(stdio_client(stdio_params(ServerSpec(ENV_SERVER, args=("--flag",))))) as client:
            seen = (await client.call_tool("started_with", {"name": "PATH"})).structured_content
            server = psutil.Process(seen["pid"])
            assert server.ppid() == warm_python_pid() is not None
            assert server.cmdline() == [sys.executable, "-m", ENV_SERVER, "--flag"]
            assert seen["argv"] == ["--flag"]


async def test_each_forked_server_gets_its_own_environment_and_folder(tmp_path) -> None:
    chinese = await _started_with(
        ServerSpec(ENV_SERVER, env={"LABKIT_LANG": "zh_CN"}, cwd=str(tmp_path)), "LABKIT_LANG"
    )
    english = await _started_with(ServerSpec(ENV_SERVER, env={"LABKIT_LANG": "en"}), "LABKIT_LANG")
    assert (chinese["value"], english["value"]) == ("zh_CN", "en")
    assert chinese["cwd"] == str(tmp_path) and english["cwd"] != str(tmp_path)
    assert chinese["pid"] != english["pid"]
    assert (await _started_with(ServerSpec(ENV_SERVER), "LABKIT_REQUEST_STATE_KEY"))["value"] is None


def _as_console_script(folder) -> ServerSpec:
    """The env server installed as `pip` installs a console script: an executable whose first line runs this Python."""
    script = folder / "env-server"
    script.write_text(f"#!{sys.executable}\n" + (REPO_ROOT / "replays" / "env_server.py").read_text())
    script.chmod(0o755)
    path = f"{folder}{os.pathsep}{os.environ['PATH']}"
    return ServerSpec("own", command="env-server", args=("--flag",), env={"PATH": path})


@pytest.mark.parametrize("kind", ["a Python file", "a console script found on PATH"])
async def test_a_script_run_by_this_python_is_forked_and_sees_what_a_cold_start_sees(
    monkeypatch: pytest.MonkeyPatch, tmp_path, kind: str
) -> None:
    script = (
        ServerSpec(
            "own",
            command=sys.executable,
            args=(str(REPO_ROOT / "replays" / "env_server.py"), "--flag"),
            env={"LABKIT_LANG": "zh_CN"},
            cwd=str(tmp_path),
        )
        if kind == "a Python file"
        else _as_console_script(tmp_path)
    )
    warm = await _started_with(script, "LABKIT_LANG")
    monkeypatch.setenv(WARM_START_ENV, "0")
    cold = await _started_with(script, "LABKIT_LANG")
    assert any(arg.endswith("_warm_python.py") for arg in warm["parent"])
    assert any(arg.endswith("_supervisor.py") for arg in cold["parent"])
    different = {
        k: (warm[k], cold[k])
        for k in ("value", "cwd", "argv", "program", "main_file", "path", "cmdline")
        if warm[k] != cold[k]
    }
    assert different == {}


SAYS_ITS_PARENT = (
    'import os, sys\nprint(open(f"/proc/{os.getppid()}/cmdline").read().replace("\\0", " "), file=sys.stderr)\n'
)
FAILURES = {
    "raises": 'raise RuntimeError("the server could not open its database")\n',
    "imports a file with a syntax error": "import broken\n",
}


def _run_to_its_end(spec: ServerSpec) -> tuple[int, str]:
    """The server's exit status and what it wrote on stderr."""
    params = stdio_params(spec)
    done = subprocess.run(
        [params.command, *params.args],
        env=params.env,
        cwd=params.cwd,
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=LIMIT,
    )
    return done.returncode, done.stderr


@pytest.mark.parametrize("failure", sorted(FAILURES))
def test_a_forked_script_that_fails_reports_it_as_python_would(
    monkeypatch: pytest.MonkeyPatch, tmp_path, failure: str
) -> None:
    (tmp_path / "broken.py").write_text("def broken(:\n")
    (tmp_path / "server.py").write_text(SAYS_ITS_PARENT + FAILURES[failure])
    spec = ServerSpec("own", command=sys.executable, args=("server.py",), cwd=str(tmp_path))
    forked, forked_stderr = _run_to_its_end(spec)
    monkeypatch.setenv(WARM_START_ENV, "0")
    cold, cold_stderr = _run_to_its_end(spec)
    forked_by, _, forked_report = forked_stderr.partition("\n")
    started_by, _, cold_report = cold_stderr.partition("\n")
    assert "_warm_python.py" in forked_by and "_supervisor.py" in started_by
    assert (forked, forked_report) == (cold, cold_report) and cold == 1 and "Traceback" in cold_report


def test_a_missing_script_gets_pythons_own_message() -> None:
    returncode, report = _run_to_its_end(ServerSpec("own", command=sys.executable, args=("no-such-server.py",)))
    assert returncode == 2 and "can't open file" in report


@pytest.mark.parametrize(
    "spec",
    [
        ServerSpec(
            "own",
            command=sys.executable,
            args=(str(REPO_ROOT / "replays" / "env_server.py"),),
            env={"PYTHONPATH": str(REPO_ROOT / "tests")},
        ),
        ServerSpec("own", command=sys.executable, args=("-X", "dev", str(REPO_ROOT / "replays" / "env_server.py"))),
    ],
    ids=["its own PYTHONPATH", "an option for Python"],
)
async def test_a_script_that_changes_how_python_starts_is_started_cold(spec: ServerSpec) -> None:
    assert any(arg.endswith("_supervisor.py") for arg in (await _started_with(spec, "PATH"))["parent"])


async def test_a_server_goes_with_its_supervisor_however_the_supervisor_ends() -> None:
    with anyio.fail_after(LIMIT):
        async with Client(stdio_client(stdio_params(ServerSpec(ENV_SERVER)))) as client:
            server = psutil.Process(
                (await client.call_tool("started_with", {"name": "PATH"})).structured_content["pid"]
            )
            supervisor = next(
                p
                for p in psutil.Process().children()
                if "_supervisor.py" in " ".join(p.cmdline()) and p.pid != warm_python_pid()
            )
            supervisor.send_signal(signal.SIGKILL)
            _, alive = psutil.wait_procs([server], timeout=10)
            assert not alive, "the server outlived its supervisor"


async def test_with_warm_start_off_a_lab_server_starts_cold(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(WARM_START_ENV, "0")
    cold, warm = await _started_with(ServerSpec(ENV_SERVER), "PATH"), None
    monkeypatch.delenv(WARM_START_ENV)
    warm = await _started_with(ServerSpec(ENV_SERVER), "PATH")
    assert any(arg.endswith("_supervisor.py") for arg in cold["parent"])
    assert any(arg.endswith("_warm_python.py") for arg in warm["parent"])


async def test_where_the_warm_python_cannot_listen_servers_start_cold(monkeypatch: pytest.MonkeyPatch) -> None:
    import labkit._warm._starter as starter
    import labkit.processes._warm as warm

    def no_seqpacket(*args: Any, **kwargs: Any) -> Any:
        raise OSError(97, "Address family not supported by protocol")

    monkeypatch.setattr(warm, "_current", None)
    monkeypatch.setattr(starter.socket, "socket", no_seqpacket)
    assert warm.warm_socket(os.getcwd()) is None
    monkeypatch.undo()
    cold = await _started_with(ServerSpec(ENV_SERVER), "PATH")
    assert cold["value"]  # it started, and answered


def test_a_warm_python_that_never_says_it_is_ready_is_stopped_and_servers_start_cold(
    monkeypatch: pytest.MonkeyPatch, tmp_path
) -> None:
    import labkit._warm._starter as starter
    import labkit.processes._warm as warm

    silent = tmp_path / "silent.py"
    silent.write_text("import sys\nsys.stdin.read()\n")  # imports nothing, says nothing, waits for its stdin
    monkeypatch.setattr(warm, "_current", None)
    monkeypatch.setattr(starter, "_SCRIPT", str(silent))
    monkeypatch.setattr(warm, "_READY_TIMEOUT_S", 0.5)
    before = {p.pid for p in psutil.Process().children()}
    assert warm.warm_socket(os.getcwd()) is None
    assert [p for p in psutil.Process().children() if p.pid not in before] == []  # the silent one was stopped


async def _has_imported(spec: ServerSpec, module: str) -> bool:
    with anyio.fail_after(LIMIT):
        async with Client(stdio_client(stdio_params(spec))) as client:
            return (await client.call_tool("imported", {"module": module})).structured_content["result"]


async def test_once_the_warm_python_is_idle_servers_are_forked_with_matplotlib_imported(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    module = "matplotlib.backends.backend_agg"
    with anyio.fail_after(LIMIT):
        while not await _has_imported(ServerSpec(ENV_SERVER), module):
            await anyio.sleep(0.5)
    monkeypatch.setenv(WARM_START_ENV, "0")
    assert not await _has_imported(ServerSpec(ENV_SERVER), module), "a cold start imports it itself"


async def test_a_server_started_without_a_status_note_leaves_dev_null_a_device(monkeypatch: pytest.MonkeyPatch) -> None:
    # Run as root (containers, CI), a note written "atomically" over /dev/null once replaced the device with a file.
    for warm in ("1", "0"):
        monkeypatch.setenv(WARM_START_ENV, warm)
        assert await _started_with(ServerSpec(ENV_SERVER), "PATH")
        assert stat.S_ISCHR(os.stat(os.devnull).st_mode), f"{os.devnull} is no longer a device (warm start {warm})"


def test_an_http_lab_server_is_forked_too_and_the_host_knows_it_listens_on_its_port() -> None:
    with http_server("logs") as url:
        port = int(url.rsplit(":", 1)[1].split("/")[0])
        listener = next(c.pid for c in psutil.net_connections("tcp") if c.laddr.port == port and c.status == "LISTEN")
        assert psutil.Process(listener).ppid() == warm_python_pid() is not None


def test_a_kernel_that_started_a_lab_server_shuts_down_by_itself_when_asked() -> None:
    # ipykernel signals its children at shutdown and waits while any is left; an unreaped warm Python (a zombie)
    # was one, so jupyter_client gave up waiting and sent the kernel SIGTERM: every restart in JupyterLab waited.
    manager, client = start_new_kernel(kernel_name="python3", cwd=str(REPO_ROOT / "notebooks"))
    try:
        reply = client.execute_interactive(
            "from mcp import Client\nfrom labkit import ServerSpec, Trace, stdio_transport\n"
            "async with Client(stdio_transport(ServerSpec('logs'), Trace())) as c:\n    await c.list_tools()\n"
            "from labkit.processes._warm import warm_python_pid\nassert warm_python_pid() is not None",
            timeout=LIMIT,
            output_hook=lambda message: None,
        )
        assert reply["content"]["status"] == "ok", reply["content"]
    finally:
        client.stop_channels()
        kernel = manager.provisioner.process
        manager.shutdown_kernel(now=False)
    assert kernel.returncode == 0, f"the kernel ended with {kernel.returncode}: it was stopped, it did not exit"
