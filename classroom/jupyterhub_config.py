"""JupyterHub for a room on one machine: one OS user a learner, the lab's environment for every one of them.

    jupyterhub -f classroom/jupyterhub_config.py      (as root, from the lab's checkout; see classroom/README.md)

Settings a teacher may change come from the environment, so this file is used as it is: `LABKIT_HUB_URL` (where
the hub listens; loopback by default, put a TLS proxy in front for a room), `LABKIT_HUB_STATE` (the hub's
database and cookie secret), `LABKIT_KERNELS_PER_LEARNER`, `LABKIT_KERNEL_IDLE_MINUTES` and
`LABKIT_SERVER_IDLE_MINUTES` (the bounds below), `LABKIT_LEARNER_MEMORY` (for spawners that enforce it).
"""

from __future__ import annotations

import os
import pwd
import shutil
import sys
from pathlib import Path

from jupyterhub.spawner import SimpleLocalProcessSpawner

LAB = Path(__file__).resolve().parents[1]
# What each learner gets a copy of, in ~/mcp-lab: lessons, solutions and the Chinese edition. The lab's code,
# servers and skills stay in the checkout, installed once for everyone (`make env`).
COURSE = ("notebooks", "solutions", "zh-CN")
COURSE_HOME = "mcp-lab"
STATE = Path(os.environ.get("LABKIT_HUB_STATE", LAB / "out" / "hub"))
KERNEL_IDLE_MINUTES = int(os.environ.get("LABKIT_KERNEL_IDLE_MINUTES", "20"))
SERVER_IDLE_MINUTES = int(os.environ.get("LABKIT_SERVER_IDLE_MINUTES", "60"))


def learner_home(spawner) -> Path:  # type: ignore[no-untyped-def]
    """The learner's home: their OS user's, or the test spawner's folder for them."""
    return Path(getattr(spawner, "home_dir", "") or pwd.getpwnam(spawner.user.name).pw_dir)


def copy_course(spawner) -> None:  # type: ignore[no-untyped-def]
    """Before a learner's server starts: the course into ~/mcp-lab, once (their edits are never overwritten)."""
    target = learner_home(spawner) / COURSE_HOME
    if target.exists():
        return
    target.mkdir(parents=True)
    for folder in COURSE:
        shutil.copytree(LAB / folder, target / folder)
    owner = spawner.user.name
    if not isinstance(spawner, SimpleLocalProcessSpawner):  # real OS users: the copy is theirs, the home private
        for path in (target, *target.rglob("*")):
            shutil.chown(path, owner, owner)
        learner_home(spawner).chmod(0o700)


c = get_config()  # type: ignore[name-defined]  # noqa: F821  (JupyterHub gives its config files get_config)
STATE.mkdir(parents=True, exist_ok=True, mode=0o700)
c.JupyterHub.bind_url = os.environ.get("LABKIT_HUB_URL", "http://127.0.0.1:8000")
c.JupyterHub.hub_ip = "127.0.0.1"
c.JupyterHub.db_url = f"sqlite:///{STATE / 'jupyterhub.sqlite'}"
c.JupyterHub.cookie_secret_file = str(STATE / "cookie_secret")
c.JupyterHub.pid_file = str(STATE / "jupyterhub.pid")
# Servers end with the hub: nothing of a learner's is left running when the teacher stops it.
c.JupyterHub.cleanup_servers = True
c.JupyterHub.cleanup_proxy = True
sys.path.insert(0, str(LAB))
from classroom import proxy_command  # noqa: E402
from classroom.spawner import hub_limit  # noqa: E402

c.ConfigurableHTTPProxy.command = [proxy_command() or "configurable-http-proxy"]

# A learner's server is waited for while it works, not for a fixed time (classroom/spawner.py): the hub's own
# limits lie beyond the spawner's furthest, and each server's log is kept in the state folder, one file a learner.
c.JupyterHub.spawner_class = "classroom.spawner.RoomSpawner"
c.RoomSpawner.logs_dir = str(STATE / "servers")
c.Spawner.start_timeout = c.Spawner.http_timeout = hub_limit()
c.Spawner.cmd = [str(Path(sys.prefix) / "bin" / "jupyterhub-singleuser")]
c.Spawner.default_url = f"/lab/tree/{COURSE_HOME}/notebooks/00_start_here.ipynb"
c.Spawner.pre_spawn_hook = copy_course
c.Spawner.environment = {
    # each learner's business systems, chart spaces and pins in their own home, never in the shared checkout
    "LABKIT_DATA_DIR": lambda spawner: str(learner_home(spawner) / ".mcp-lab-data"),
    "MPLBACKEND": "Agg",
    # a room on shared CPUs is slow, not broken: the teacher's scale for every lab limit reaches each learner
    "LABKIT_TIME_SCALE": os.environ.get("LABKIT_TIME_SCALE", "1"),
}
# A kernel left idle (a lesson finished and left open) is shut down; its notebook stays, Run All brings it back.
# A learner keeps at most LABKIT_KERNELS_PER_LEARNER kernels (classroom/kernels.py): the memory bound of the guide.
c.Spawner.args = [
    "--ServerApp.kernel_manager_class=classroom.kernels.RoomKernelManager",
    f"--RoomKernelManager.max_kernels={os.environ.get('LABKIT_KERNELS_PER_LEARNER', '3')}",
    f"--RoomKernelManager.cull_idle_timeout={KERNEL_IDLE_MINUTES * 60}",
    "--RoomKernelManager.cull_interval=60",
    "--RoomKernelManager.cull_connected=True",
]
# The memory a learner may use. LocalProcessSpawner does not enforce it (SystemdSpawner and KubeSpawner do);
# the figure comes from the per-learner measurement in classroom/README.md.
c.Spawner.mem_limit = os.environ.get("LABKIT_LEARNER_MEMORY", "1G")

# A learner's whole server stops after an idle hour (JupyterHub's own idle culler, a hub-managed service).
c.JupyterHub.load_roles = [
    {
        "name": "idle-culler",
        "scopes": ["list:users", "read:users:activity", "read:servers", "delete:servers"],
        "services": ["idle-culler"],
    }
]
c.JupyterHub.services = [
    {
        "name": "idle-culler",
        "command": [sys.executable, "-m", "jupyterhub_idle_culler", f"--timeout={SERVER_IDLE_MINUTES * 60}"],
    }
]
