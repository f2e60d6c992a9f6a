"""Isolation by construction, each property seen from inside a real sandboxed server (`tests/sandbox_probe.py`).

The probe is started by the shield as an untrusted server beside the trusted `logs` server, its spec naming the
data folder as a careless one would; it reports what its world holds, and the host checks each property.
"""

from __future__ import annotations

import json
import os
import socket
import sys
from pathlib import Path
from typing import Any

import anyio
import pytest

from labkit.host import GatePolicy, Host, ServerSpec, confinement, server_env
from labkit.lessons import prepare_lab
from labkit.processes._sandbox import SYSTEM_FILES
from labkit.security import Defences, PinStore, Shield, host_state_dir, least_privilege
from labkit.trace import Trace
from servers._wiring import data_dir

PROBE = Path(__file__).with_name("sandbox_probe.py")
REPO = PROBE.parents[1]
SYSTEM = {"usr", "bin", "sbin", "lib", "lib32", "lib64", "etc", "proc", "dev", "tmp"}
pytestmark = pytest.mark.skipif(not confinement().confined, reason=f"no sandbox here: {confinement().why}")


def _probe_spec() -> ServerSpec:
    return ServerSpec(
        "probe",
        command=sys.executable,
        args=(str(PROBE),),
        readable=(str(PROBE),),
        env={"LABKIT_DATA_DIR": str(data_dir()), "PROBE_NAMED": "yes"},
    )


def _every_path_under(folder: Path) -> list[str]:
    return [str(Path(top) / name) for top, folders, files in os.walk(folder) for name in [*folders, *files]]


@pytest.fixture(scope="module")
def world() -> dict[str, Any]:
    return anyio.run(_world)


async def _world() -> dict[str, Any]:
    """What the probe saw, and what the host knows: the lab, the other server's state, a listener that stays silent."""
    lab = prepare_lab()
    pins = PinStore(host_state_dir() / "pins-isolation.json")
    pins.put("logs", "query_errors", {"name": "query_errors"}, "0" * 64)
    listener = socket.create_server(("127.0.0.1", 0))
    listener.setblocking(False)
    port = listener.getsockname()[1]
    trace = Trace()
    shield = Shield(trace, Defences.all(), lab=lab, pins=pins)
    with anyio.fail_after(120):
        async with shield.open([ServerSpec("logs"), _probe_spec()]) as host:
            await host.call("logs__query_errors", {"service": "order-service", "since": "2026-10-29T20:00"})
            events = host.connector.events
            assert events is not None
            others = [p for p in _every_path_under(events.path) if "/probe-" not in p]
            secrets = [
                str(pins.path),
                str(lab.home / ".ssh" / "id_rsa"),
                *others,
                *_every_path_under(data_dir()),
                *map(str, [*Path.home().iterdir(), *REPO.iterdir(), *Path("/etc").iterdir()]),
                f"/proc/{os.getpid()}",
            ]
            writes = [
                str(lab.private("probe") / "mine.txt"),
                str(lab.workspace / "planted.txt"),
                str(data_dir() / "planted.txt"),
                str(pins.path),
                "/planted.txt",
                "/usr/planted.txt",
                str(Path(__file__).parent / "planted.txt"),
            ]
            seen = await host.pool.client("probe").call_tool("world", {"look": secrets, "write": writes, "port": port})
    try:
        accepted = listener.accept()
    except BlockingIOError:
        accepted = None
    listener.close()
    return {
        "seen": seen.structured_content,
        "lab": lab,
        "writes": writes,
        "secrets": secrets,
        "pins": pins,
        "others": others,
        "accepted": accepted,
        "spec": _probe_spec(),
    }


def test_only_its_private_folder_is_writable(world):
    lab = world["lab"]
    assert world["seen"]["written"] == [str(lab.private("probe") / "mine.txt")]
    assert (lab.private("probe") / "mine.txt").exists()
    planted = [p for p in world["writes"][1:] if Path(p).is_file() and "inside the sandbox" in Path(p).read_text()]
    assert planted == []


def test_other_servers_state_is_not_in_its_world(world):
    """The data folder's stores, the fake home, the pins, the other server's events: absent, not merely read-only."""
    lab = world["lab"]
    visible = {p for p in world["seen"]["visible"] if Path(p).is_relative_to(data_dir()) or p in world["others"]}
    given = [lab.workspace, lab.private("probe"), lab.ground_truth]
    # bwrap builds the folders leading to what it binds: those ancestors are empty shells, holding nothing else.
    shells = {str(parent) for folder in given for parent in folder.parents}
    leaked = [p for p in visible if p not in shells and not any(Path(p).is_relative_to(g) for g in given)]
    assert leaked == []
    assert str(world["pins"].path) not in visible and str(lab.home / ".ssh" / "id_rsa") not in visible
    assert world["others"] and not set(world["others"]) & visible


def test_the_root_holds_only_the_system_python_and_its_own_files(world):
    """`/` is built from nothing: the system, Python and the server's own code; no other file of the home folder,
    the repository (its `data/`, notebooks, `.git`) or `/etc` (`/etc/shadow`)."""
    bound = [Path(sys.prefix), Path(sys.base_prefix), REPO / "servers", REPO / "labkit", PROBE, data_dir()]
    assert set(world["seen"]["root"]) <= SYSTEM | {p.parts[1] for p in bound}
    on_the_way = {str(q) for p in bound for q in (p, *p.parents)}
    for folder in (Path.home(), REPO):
        shown = {p for p in world["seen"]["visible"] if Path(p).parent == folder}
        assert shown <= on_the_way, shown - on_the_way
    etc = {p for p in world["seen"]["visible"] if p.startswith("/etc/")}
    assert etc <= {str(q) for p in SYSTEM_FILES for q in (Path(p), *Path(p).parents)} and "/etc/shadow" not in etc


def test_it_has_no_network_a_loopback_listener_hears_nothing(world):
    assert world["seen"]["connected"] is False and world["accepted"] is None


def test_it_has_its_own_process_namespace(world):
    assert f"/proc/{os.getpid()}" not in world["seen"]["visible"]
    assert world["seen"]["pid"] < 10 and world["seen"]["processes"] < 10


def test_its_environment_is_only_what_its_spec_names(world):
    launched = least_privilege(world["spec"], world["lab"])
    # bwrap sets PWD to the working folder the spec names
    named = set(server_env(launched)) | {"LABKIT_EVENTS_FILE", "PWD"}
    environment = world["seen"]["environment"]
    assert set(environment) <= named and environment["PROBE_NAMED"] == "yes"
    assert os.environ["OPS_DEPLOY_TOKEN"] not in str(environment)


@pytest.mark.parametrize("confined", [False, True], ids=["careless", "confined"])
async def test_a_server_that_rewrites_a_trusted_store_as_it_starts_changes_nothing_when_confined(confined, tmp_path):
    """`untrusted.tamper` deletes most of last night's errors from the log store as it starts, with no instruction
    anywhere: the scanner, pins and taint see nothing. Only a world without the store stops it."""
    data = {"LABKIT_DATA_DIR": str(tmp_path)}
    servers = [ServerSpec("logs", env=data), ServerSpec("untrusted.tamper", env=data)]
    shield = Shield(
        Trace(),
        Defences.all() if confined else Defences.none(),
        lab=prepare_lab(),
        pins=PinStore(tmp_path / "pins.json"),
    )
    with anyio.fail_after(120):
        async with shield.open(servers) as host:
            name = "logs__query_errors" if confined else "query_errors"
            answer = await host.call(name, {"service": "order-service", "since": "2026-10-29T20:00"})
    total = json.loads(answer.text.split("\n", 1)[-1] if confined else answer.text)["total"]
    assert (total > 300) is confined, total


_SCRIPT_SERVER = '''
from mcp.server.mcpserver import MCPServer

from sibling import WORD

server = MCPServer("script")


@server.tool()
def word() -> str:
    """The word its sibling module holds, and whether the file beside its folder can be seen."""
    import os
    return f"{WORD} {os.path.exists(os.environ['BESIDE'])}"


server.run()
'''


async def test_a_script_server_outside_the_lab_runs_confined_with_its_own_folder_and_nothing_beside_it(tmp_path):
    """`python /some/folder/server.py` (a config's way) is given its script's folder to read, so it starts and
    imports its siblings; a file next to that folder stays out of sight."""
    folder = tmp_path / "server"
    folder.mkdir()
    (folder / "server.py").write_text(_SCRIPT_SERVER)
    (folder / "sibling.py").write_text("WORD = 'sibling'\n")
    beside = tmp_path / "beside.txt"
    beside.write_text("not the server's")
    spec = ServerSpec(
        "script", command=sys.executable, args=(str(folder / "server.py"),), env={"BESIDE": str(beside)}, sandbox=True
    )
    with anyio.fail_after(120):
        async with Host(Trace(), [spec], policy=GatePolicy(auto_approve=frozenset({"word"}))) as host:
            answer = await host.call("word", {})
    assert json.loads(answer.text) == {"result": "sibling False"}
