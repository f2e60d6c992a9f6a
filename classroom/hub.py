"""A real JupyterHub on 127.0.0.1 with N learners, each running a lesson in their own server (tests, benchmarks)."""

from __future__ import annotations

import asyncio
import json
import os
import pwd
import signal
import socket
import subprocess
import sys
import time
import uuid
from dataclasses import dataclass, field
from pathlib import Path

import httpx
from tornado.httpclient import HTTPClientError, HTTPRequest
from tornado.websocket import websocket_connect

from classroom import proxy_command
from classroom.memory import tree_memory
from classroom.spawner import hub_limit
from labkit._time_limits import scaled

__all__ = ["Hub", "LessonRun", "missing"]

LAB = Path(__file__).resolve().parents[1]
CONFIG = Path(__file__).with_name("jupyterhub_config.py")
# How long a hub and one lesson cell may take. A room on shared CPUs is slow, not dead: every limit scales with
# LABKIT_TIME_SCALE, as the lab's own limits do; a learner's server is waited for by the hub's spawner
# (classroom/spawner.py), which tells a busy machine from a server that ended or does not answer.
_HUB_UP_S = scaled(60)
_CELL_S = scaled(300)
_REQUEST_S = scaled(60)
_ADMIN_TOKEN = uuid.uuid4().hex


def _end_with_parent() -> None:
    """In the hub's process: SIGTERM when the process that started it dies, so a killed run leaves no hub behind
    (on SIGTERM the hub stops every learner's server itself)."""
    import ctypes

    ctypes.CDLL(None, use_errno=True).prctl(1, signal.SIGTERM)  # PR_SET_PDEATHSIG


def missing() -> str:
    """What this machine lacks to run a hub ("" if nothing): JupyterHub (PyPI) or its proxy (npm)."""
    import importlib.util

    lacking = [
        name
        for name, there in (
            ("jupyterhub", importlib.util.find_spec("jupyterhub")),
            ("configurable-http-proxy", proxy_command()),
        )
        if not there
    ]
    return f"{' and '.join(lacking)} not installed: run `make classroom-env`" if lacking else ""


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


@dataclass
class LessonRun:
    """One learner's run of one notebook through their own server's kernel."""

    learner: str
    notebook: str
    seconds: float = 0.0
    cells: int = 0
    errors: list[str] = field(default_factory=list)
    peak_pss: int = 0  # bytes: the learner's whole server process tree at its largest while the lesson ran

    @property
    def delivered(self) -> bool:
        return self.cells > 0 and not self.errors


class Hub:
    """JupyterHub started from classroom/jupyterhub_config.py, with test-only auth and a spawner needing no OS users.

    The learners' servers are real `jupyterhub-singleuser` processes reached through the hub's proxy; each gets the
    course copied into its home by the config's own hook, and `LABKIT_SCRIPTED_USER=1` so forms are answered.
    """

    def __init__(
        self,
        root: Path,
        learners: int,
        *,
        os_users: list[str] | None = None,
        extra_env: dict[str, str] | None = None,
        python: str = sys.executable,
        hub_env: dict[str, str] | None = None,
        extra_config: list[str] | None = None,
    ) -> None:
        if missing():
            raise RuntimeError(missing())
        self.root = root
        # `os_users`: learners who are OS users already, spawned as themselves (the config's LocalProcessSpawner);
        # otherwise test learners in folders of `root`, all run as the hub's own user
        self.names = os_users or [f"learner{k + 1}" for k in range(learners)]
        self._os_users = bool(os_users)
        self._python = python  # the hub's, and so its learners' (`c.Spawner.cmd`): one every learner can run
        self.url = f"http://127.0.0.1:{_free_port()}"
        self._env = {"LABKIT_SCRIPTED_USER": "1", **(extra_env or {})}
        self._hub_env, self._extra_config = hub_env or {}, extra_config or []  # the hub's own, and lines of config
        self._process: subprocess.Popen[bytes] | None = None
        self._api = httpx.AsyncClient(
            base_url=f"{self.url}/hub/api", headers={"Authorization": f"token {_ADMIN_TOKEN}"}, timeout=_REQUEST_S
        )

    def _config(self) -> Path:
        """classroom/jupyterhub_config.py as it is, then what a test hub changes: ports, auth, an admin token."""
        lines = [
            f"load_subconfig({str(CONFIG)!r})",
            f"c.JupyterHub.bind_url = {self.url!r}",
            f"c.JupyterHub.hub_port = {_free_port()}",
            f"c.ConfigurableHTTPProxy.api_url = 'http://127.0.0.1:{_free_port()}'",
            "c.JupyterHub.authenticator_class = 'dummy'",
            f"c.Authenticator.allowed_users = {set(self.names)!r}",
            f"c.Spawner.environment.update({self._env!r})",
            f"c.JupyterHub.services.append({{'name': 'lab-test', 'api_token': {_ADMIN_TOKEN!r}}})",
            "c.JupyterHub.load_roles.append({'name': 'admin', 'services': ['lab-test']})",
        ]
        if not self._os_users:  # the test spawner runs every learner's server as the hub's own user
            home = str(self.root / "home" / "{username}")
            lines += [
                "c.JupyterHub.spawner_class = 'classroom.spawner.SimpleRoomSpawner'",
                f"c.SimpleLocalProcessSpawner.home_dir_template = {home!r}",
                *(["c.Spawner.args.append('--allow-root')"] if os.getuid() == 0 else []),
            ]
        overrides = self.root / "hub_test_config.py"
        overrides.write_text("\n".join(lines + self._extra_config) + "\n")
        return overrides

    async def __aenter__(self) -> Hub:
        state = self.root / "state"
        env = {**os.environ, "LABKIT_HUB_STATE": str(state), **self._hub_env}
        log = (self.root / "hub.log").open("wb")
        self._process = subprocess.Popen(
            [self._python, "-m", "jupyterhub", "-f", str(self._config())],
            cwd=self.root,
            env=env,
            stdout=log,
            stderr=subprocess.STDOUT,
            start_new_session=True,
            preexec_fn=_end_with_parent,
        )
        deadline = time.monotonic() + _HUB_UP_S
        while time.monotonic() < deadline:
            if self._process.poll() is not None:
                raise RuntimeError(f"the hub exited ({self._process.returncode}): {self.log_tail()}")
            try:
                if (await self._api.get("/")).status_code == 200:
                    return self
            except httpx.TransportError:
                pass
            await asyncio.sleep(0.3)
        raise RuntimeError(f"the hub did not answer within {_HUB_UP_S:.0f} s: {self.log_tail()}")

    async def __aexit__(self, *exc: object) -> None:
        await self._api.aclose()
        if self._process and self._process.poll() is None:
            self._process.send_signal(signal.SIGTERM)  # the hub stops every learner's server (cleanup_servers)
            try:
                self._process.wait(timeout=_REQUEST_S)
            except subprocess.TimeoutExpired:
                os.killpg(self._process.pid, signal.SIGKILL)
                self._process.wait()

    def log_tail(self, lines: int = 15) -> str:
        return "\n".join((self.root / "hub.log").read_text(errors="replace").splitlines()[-lines:])

    def processes(self) -> list[int]:
        """Every process of this hub's learners still alive: their servers, kernels and MCP servers (by environment)."""
        marker = str(self.root).encode()
        alive = []
        for entry in Path("/proc").iterdir():
            if entry.name.isdigit() and int(entry.name) != os.getpid():
                try:
                    if marker in (entry / "environ").read_bytes():
                        alive.append(int(entry.name))
                except OSError:
                    continue
        return alive

    def server_pid(self, name: str) -> int:
        """The learner's single-user server process."""
        home = (str(self.root / "home" / name) if not self._os_users else pwd.getpwnam(name).pw_dir).encode()
        for pid in self.processes():
            try:
                if (
                    b"jupyterhub-singleuser" in Path(f"/proc/{pid}/cmdline").read_bytes()
                    and b"HOME=" + home + b"\0" in Path(f"/proc/{pid}/environ").read_bytes()
                ):
                    return pid
            except OSError:
                continue
        raise LookupError(f"{name} has no running server")

    async def start_server(self, name: str) -> str:
        """Create the learner, start their server through the REST API, wait until it is ready; their API token."""
        (await self._api.post(f"/users/{name}")).raise_for_status() if (
            await self._api.get(f"/users/{name}")
        ).status_code == 404 else None
        response = await self._api.post(f"/users/{name}/server")
        if response.status_code not in (201, 202):  # a start that failed at once: the hub's answer is a bare 500
            raise RuntimeError(f"{name}'s server did not start: {await self._spawn_failure(name)}")
        # As long as the hub waits: its spawner decides, by the servers' progress, and says why when it gives up.
        guard = time.monotonic() + hub_limit() + _REQUEST_S
        while time.monotonic() < guard:
            user = (await self._api.get(f"/users/{name}")).json()
            server = user.get("servers", {}).get("", {})
            if server.get("ready"):
                token = await self._api.post(f"/users/{name}/tokens", json={"note": "lesson run"})
                token.raise_for_status()
                return str(token.json()["token"])
            if not server.get("pending"):
                raise RuntimeError(f"{name}'s server did not start: {await self._spawn_failure(name)}")
            await asyncio.sleep(0.5)
        raise RuntimeError(
            f"the hub neither started nor gave up on {name}'s server within its own limit: {self.log_tail()}"
        )

    async def _spawn_failure(self, name: str) -> str:
        """What the hub says of the learner's last start that failed (its progress stream's last event)."""
        message = "the hub gave no reason"
        async with self._api.stream("GET", f"/users/{name}/server/progress") as events:
            async for line in events.aiter_lines():
                if line.startswith("data:"):
                    message = json.loads(line[5:]).get("message", message)
        return message

    async def run_lesson(
        self, name: str, token: str, notebook: str, *, sampled: int | None = None, leave_open: bool = False
    ) -> LessonRun:
        """Run every code cell of ~/mcp-lab/<notebook> in a new kernel of the learner's server, as Run All does.

        `sampled`: a process whose tree's PSS is sampled meanwhile; `leave_open`: the kernel stays, as a learner
        leaves a lesson's tab open and goes on to the next. A run that cannot reach the server or its kernel is a
        run with that error, so one learner's failure is reported beside the others' results.
        """
        run = LessonRun(name, notebook)
        started = time.monotonic()
        try:
            await self._run_lesson(run, token, sampled, leave_open)
        except (httpx.HTTPError, OSError, TimeoutError, HTTPClientError) as error:
            run.errors.append(f"{type(error).__name__}: {error}")
        run.seconds = time.monotonic() - started
        return run

    async def _run_lesson(self, run: LessonRun, token: str, sampled: int | None, leave_open: bool) -> None:
        name, notebook = run.learner, run.notebook
        path = f"mcp-lab/{notebook}"
        headers = {"Authorization": f"token {token}"}
        base = f"{self.url}/user/{name}/api"
        cells = json.loads((LAB / notebook).read_text())["cells"]
        async with httpx.AsyncClient(headers=headers, timeout=_REQUEST_S) as api:
            session = await api.post(
                f"{base}/sessions",
                json={"path": path, "type": "notebook", "name": Path(path).name, "kernel": {"name": "python3"}},
            )
            session.raise_for_status()
            kernel = session.json()["kernel"]["id"]
            sampler = asyncio.create_task(_sample_peak(run, sampled)) if sampled else None
            try:
                await self._execute(
                    run,
                    f"{base}/kernels/{kernel}/channels".replace("http", "ws", 1),
                    headers,
                    ["".join(cell["source"]) for cell in cells if cell["cell_type"] == "code"],
                )
            finally:
                if sampler:
                    sampler.cancel()
                if not leave_open:
                    await api.delete(f"{base}/sessions/{session.json()['id']}")

    async def _execute(self, run: LessonRun, url: str, headers: dict[str, str], sources: list[str]) -> None:
        channel = await websocket_connect(
            HTTPRequest(url, headers=headers, connect_timeout=_REQUEST_S, request_timeout=_REQUEST_S)
        )
        session = uuid.uuid4().hex
        try:
            for source in sources:
                msg_id = uuid.uuid4().hex
                channel.write_message(
                    json.dumps(
                        {
                            "header": {
                                "msg_id": msg_id,
                                "session": session,
                                "username": run.learner,
                                "version": "5.3",
                                "msg_type": "execute_request",
                                "date": "",
                            },
                            "parent_header": {},
                            "metadata": {},
                            "channel": "shell",
                            "buffers": [],
                            "content": {
                                "code": source,
                                "silent": False,
                                "store_history": True,
                                "user_expressions": {},
                                "allow_stdin": False,
                                "stop_on_error": True,
                            },
                        }
                    )
                )
                run.cells += 1
                if not await _until_idle(channel, msg_id, run):
                    return
        finally:
            channel.close()


async def _until_idle(channel, msg_id: str, run: LessonRun) -> bool:  # type: ignore[no-untyped-def]
    """Read the kernel's messages for one cell until it is idle again; False if the cell raised."""
    ok = True
    deadline = time.monotonic() + _CELL_S
    while True:
        remaining = deadline - time.monotonic()
        if remaining <= 0:
            run.errors.append(f"cell {run.cells}: no answer within {_CELL_S:.0f} s")
            return False
        raw = await asyncio.wait_for(channel.read_message(), remaining)
        if raw is None:
            run.errors.append(f"cell {run.cells}: the kernel's channel closed")
            return False
        message = json.loads(raw)
        if message.get("parent_header", {}).get("msg_id") != msg_id:
            continue
        kind = message["header"]["msg_type"]
        if kind == "error":
            run.errors.append(f"cell {run.cells}: {message['content']['ename']}: {message['content']['evalue']}")
            ok = False
        elif kind == "status" and message["content"]["execution_state"] == "idle":
            return ok


async def _sample_peak(run: LessonRun, root: int) -> None:
    while True:
        run.peak_pss = max(run.peak_pss, tree_memory(root).pss)
        await asyncio.sleep(0.5)
