"""Jupyter kernels forked by a warm Python that imported ipykernel and the lab's libraries once (all but the first).

The lab's `python3` kernel spec names this module's provisioner (`make env` and Binder's postBuild install the
spec: `python -m labkit._warm_kernels`). Its first launch in an environment starts the kernel as jupyter_client
does and, beside it, two warm Pythons: one importing `PRELOADED` in that environment, and one for servers (as the
host starts its own, `labkit/processes/_warm.py`). Each later launch in that environment asks the first to fork the
kernel, which then runs `python -m ipykernel_launcher` in its own environment, folder, session and descriptors,
as an exec'd kernel would; the second is lent to the kernel's host, which then starts no warm Python of its own.
A launch they cannot serve as an exec would starts the usual way: another command, an independent kernel, a folder
whose files would shadow a module imported ahead, `LABKIT_WARM_START=0`, or an environment not seen before (a
module may read it when imported; the launches after it are forked by warm Pythons started in it).
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import sys
import threading
import time
from pathlib import Path
from typing import Any

from jupyter_client.connect import KernelConnectionInfo
from jupyter_client.provisioning import LocalProvisioner

from ._time_limits import scaled
from ._warm import LENT_ENV, SERVERS_FIRST, SERVERS_WHEN_IDLE, Forked, WarmPython, fork, servers_env, warm_starts

__all__ = [
    "PRELOADED",
    "PROVISIONER",
    "WarmKernelProvisioner",
    "install_kernel_spec",
    "wait_until_ready",
    "warm_python_pids",
]

PROVISIONER = "labkit-warm-kernel"
"""The provisioner's name in the kernel spec: an entry point of the lab's package (`pyproject.toml`)."""
PRELOADED = (
    "ipykernel.kernelapp",
    "ipykernel.ipkernel",
    "ipykernel.zmqshell",
    "ipykernel.debugger",
    "numpy",
    "matplotlib",
    "matplotlib.figure",
    "matplotlib.backends.backend_agg",
    "PIL.Image",
    "anthropic",
    "openai",
    "httpx2",
    "yaml",
    "psutil",
    *SERVERS_FIRST,
    "mcp.client.stdio",
    "mcp.client.streamable_http",
)
"""What a kernel imports before it runs a cell, and what a lesson's kernel imports after. Never a module that looks at
the running IPython when imported: not pandas (a kernel's display options differ from a terminal's), ipywidgets or
matplotlib's inline backend (both register with the kernel), which each lesson's kernel imports itself."""
_PER_LAUNCH = ("JPY_SESSION_NAME", "PYTEST_CURRENT_TEST", LENT_ENV)
"""Variables that differ from kernel to kernel and that no module reads when imported, so a kernel forked with its own
values is still one the warm Python can serve: JupyterLab names each kernel's notebook (ipykernel reads it when the
kernel starts), pytest the test phase it runs in (nbval starts each notebook's kernel in another), and ours."""
_INLINE_BACKEND = "module://matplotlib_inline.backend_inline"
"""What ipykernel sets MPLBACKEND to when it is not set, before any lesson imports matplotlib (which reads it)."""
_LAUNCHER = "ipykernel_launcher"


class _WarmPythons:
    """The two warm Pythons of one environment: the one that forks kernels, and the one lent to their hosts."""

    def __init__(self, env: dict[str, str]) -> None:
        self.env = env
        self.kernels = WarmPython(
            PRELOADED, env={**env, "MPLBACKEND": env.get("MPLBACKEND") or _INLINE_BACKEND}, kept=True
        )
        self.servers = WarmPython((*SERVERS_FIRST, *SERVERS_WHEN_IDLE), env=servers_env(env))

    def ready(self) -> bool:
        return self.kernels.ready(0) and self.servers.ready(0)

    def ended(self) -> bool:
        """Whether one of them ended after both had said they were ready (then new ones serve the launches to come;
        ones that end before are not started again: their launches start as jupyter_client starts them)."""
        pythons = (self.kernels, self.servers)
        return all(python.said_ready for python in pythons) and not all(python.running() for python in pythons)


_by_environment: dict[frozenset[tuple[str, str]], _WarmPythons] = {}
_starting = threading.Lock()
"""Held while an environment's warm Pythons are looked up, started or asked whether ready: launches run in threads
(`launch_kernel`), two first launches in one environment must not start two pairs, and a warm Python's word that it
is ready is read once."""


def _fork_kernel(cmd: list[str], kwargs: dict[str, Any]) -> Forked | None:
    """The kernel `cmd` names, forked by the warm Python of its environment if that can serve it; else None (and
    warm Pythons started for that environment, for the launches to come)."""
    cwd = str(kwargs.get("cwd") or os.getcwd())
    if (
        not warm_starts()
        or cmd[:3] != [sys.executable, "-m", _LAUNCHER]
        or kwargs.get("independent")
        or not Path(cwd).is_dir()
        or _shadowed(Path(cwd))
    ):  # a missing folder: jupyter_client's own error
        return None
    env = dict(kwargs.get("env") or os.environ)
    env["JPY_PARENT_PID"] = str(os.getpid())  # as jupyter_client's launcher sets it: ipykernel reads it at import
    shared = {name: value for name, value in env.items() if name not in _PER_LAUNCH}
    key = frozenset(shared.items())
    with _starting:
        warm = _by_environment.get(key)
        if warm is None or warm.ended():
            # Without abstract sockets or SOCK_SEQPACKET every kernel starts as jupyter_client starts it.
            with contextlib.suppress(OSError):
                _by_environment[key] = _WarmPythons(shared)
            return None
        if not warm.ready():
            return None
    env[LENT_ENV] = f"{warm.servers.socket} {warm.servers.pid} {warm.kernels.pid}"
    stdin, closed = os.pipe()  # as jupyter_client gives an exec'd kernel: a pipe whose other end is closed
    os.close(closed)
    try:
        request = {"module": _LAUNCHER, "args": cmd[3:], "env": env, "cwd": cwd, "session": True}
        return fork(warm.kernels.socket, request, [stdin, _fd(kwargs.get("stdout"), 1), _fd(kwargs.get("stderr"), 2)])
    finally:
        os.close(stdin)


def warm_python_pids() -> set[int]:
    """The pids of this process's warm Pythons for kernels and their servers: they serve every launch until we exit."""
    return {
        pid
        for warm in tuple(_by_environment.values())
        for python in (warm.kernels, warm.servers)
        if python.process.poll() is None
        for pid in python.pids
    }


def wait_until_ready(timeout: float) -> bool:
    """Whether this process has started warm Pythons and every one is ready, waiting at most `timeout` seconds (for a
    benchmark or a test that wants its next launch forked), scaled by `LABKIT_TIME_SCALE` and moved on while they
    wait for a CPU, as every limit of the lab (`Deadline`)."""
    # Imported here: Jupyter imports this module to launch every kernel, and only a test or a benchmark waits.
    from .processes import Deadline

    deadline = Deadline(scaled(timeout), tree=tuple(warm_python_pids()))
    while not _all_ready():
        if deadline.passed():
            return False
        time.sleep(0.1)
    return True


def _all_ready() -> bool:
    with _starting:  # a launch's thread may be reading a warm Python's word that it is ready
        return bool(_by_environment) and all(warm.ready() for warm in _by_environment.values())


def _shadowed(folder: Path) -> bool:
    """Whether a kernel started in `folder` would import something of the folder's instead of a module imported
    ahead (a `numpy.py` beside the notebook), or matplotlib would read the folder's `matplotlibrc`."""
    names = {module.partition(".")[0] for module in PRELOADED}
    return (folder / "matplotlibrc").exists() or any(
        (folder / f"{name}.py").exists() or (folder / name / "__init__.py").exists() for name in names
    )


def _fd(stream: Any, default: int) -> int:
    """A launch's stdout or stderr as a descriptor: inherited (None), a descriptor, or a file."""
    if stream is None:
        return default
    return stream if isinstance(stream, int) else stream.fileno()


class WarmKernelProvisioner(LocalProvisioner):  # type: ignore[misc]
    """jupyter_client's local provisioner, whose launches are forked by a warm Python where it can serve them."""

    async def launch_kernel(self, cmd: list[str], **kwargs: Any) -> KernelConnectionInfo:
        # A fork waits on another process (the warm Python's answer, or warm Pythons started): in a thread, so that
        # Jupyter's event loop serves every other request meanwhile, however busy the machine or that Python is.
        forked = await asyncio.to_thread(_fork_kernel, cmd, kwargs)
        if forked is None:
            return await super().launch_kernel(cmd, **kwargs)
        self.process = forked  # type: ignore[assignment]  # a Popen look-alike: poll, wait, send_signal, kill
        # Its own session's leader, as an exec'd kernel: interrupts and kills reach its process group, never ours.
        self.pid = self.pgid = forked.pid
        self.cwd = kwargs.get("cwd", Path.cwd())
        return self.connection_info


def install_kernel_spec(prefix: str = sys.prefix) -> str:
    """Install ipykernel's `python3` kernel spec into `prefix`, naming this provisioner; where it went."""
    from ipykernel.kernelspec import get_kernel_dict, write_kernel_spec
    from jupyter_client.kernelspec import KernelSpecManager

    metadata = {**get_kernel_dict()["metadata"], "kernel_provisioner": {"provisioner_name": PROVISIONER, "config": {}}}
    return KernelSpecManager().install_kernel_spec(
        write_kernel_spec(overrides={"metadata": metadata}), "python3", prefix=prefix
    )


if __name__ == "__main__":
    print(f"installed the python3 kernel spec (forked by a warm Python) in {install_kernel_spec()}")  # noqa: T201 - run as a script by `make env`
