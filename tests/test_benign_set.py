"""The benign set: what published MCP servers list (`tools/benign_tools.py capture`), and what the host does with it.

Nothing is started: the tests read the committed capture and pass it through the host's guards as listing would.
"""

from __future__ import annotations

import importlib.util
import json
import re
import sys
from collections import defaultdict
from pathlib import Path
from typing import Any

import pytest
from mcp_types import Tool

from labkit.lessons import false_flags, lab_server_tools, published_tools
from labkit.security import Defences, LabFolder, PinStore, ScanGuard, Shield, scan_tool
from labkit.trace import Trace

ROOT = Path(__file__).resolve().parents[1]
CAPTURED = json.loads((ROOT / "labkit" / "lessons" / "data" / "published_servers.json").read_text(encoding="utf-8"))
SERVERS: list[dict[str, Any]] = CAPTURED["servers"]
_EXACT = {"PyPI": re.compile(r"^\d+(\.\d+)*$"), "npm": re.compile(r"^\d+\.\d+\.\d+$")}


def _capture_script() -> Any:
    spec = importlib.util.spec_from_file_location("benign_tools_script", ROOT / "tools" / "benign_tools.py")
    assert spec is not None and spec.loader is not None, "tools/benign_tools.py is there"
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # its dataclass looks its module up
    spec.loader.exec_module(module)
    return module


def _lab_servers() -> list[dict[str, Any]]:
    grouped: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for server, tool in lab_server_tools():
        grouped[server].append(tool)
    return [{"server": server, "tools": tools, "instructions": None} for server, tools in grouped.items()]


async def _host(tmp_path: Path, defences: Defences, published: list[dict[str, Any]]) -> tuple[Shield, dict[str, Any]]:
    """The shield, and the names it offers of each server, when the lab's servers (trusted, listed first) and then
    `published` are listed: every guard's `on_list` in the shield's order, as the host's listing runs them."""
    shield = Shield(Trace(), defences, lab=LabFolder(tmp_path / "lab"), pins=PinStore(tmp_path / "pins.json"))
    offered = {}
    for entry in [*_lab_servers(), *published]:
        listed = [Tool.model_validate(tool) for tool in entry["tools"]]
        for guard in shield.guards:
            listed = await guard.on_list(entry["server"], listed)
        offered[entry["server"]] = [tool.name for tool in listed]
    return shield, offered


# Pins withhold nothing on a first listing (the first test shows it); without them a host of every published server
# lists at once, where PinStore rewriting its whole file for each tool would take most of the time for ~300 tools.
ALL = Defences.all()
NO_PINS = ALL.without("pin")


def test_the_benign_set_is_over_a_hundred_tools_from_ten_published_packages_each_at_an_exact_version():
    packages = {(entry["registry"], entry["package"]) for entry in SERVERS}
    assert len(packages) == len(SERVERS) >= 10, packages
    assert sum(len(entry["tools"]) for entry in SERVERS) >= 100
    for entry in SERVERS:
        assert _EXACT[entry["registry"]].match(entry["version"]), entry["version"]
        assert entry["tools"] and all(tool["name"] and tool["inputSchema"] for tool in entry["tools"]), entry["server"]
        assert entry["serverInfo"]["name"] and {"license", "instructions", "launched"} <= set(entry), entry["server"]
        names = [tool["name"] for tool in entry["tools"]]
        assert len(set(names)) == len(names), f"{entry['server']} lists a name twice"


def test_the_capture_is_the_output_of_the_capture_script_for_its_pins():
    pins = [(p.server, p.registry, p.name, p.version) for p in _capture_script().PACKAGES]
    assert [(e["server"], e["registry"], e["package"], e["version"]) for e in SERVERS] == pins


@pytest.mark.parametrize("entry", SERVERS, ids=[entry["server"] for entry in SERVERS])
async def test_all_defences_offer_every_tool_of_a_published_server_listed_beside_the_labs_own(entry, tmp_path):
    """The host as a learner would use it: the lab's servers (trusted, listed first), then one published server."""
    shield, offered = await _host(tmp_path, ALL, [entry])
    assert offered == {e["server"]: [t["name"] for t in e["tools"]] for e in [*_lab_servers(), entry]}, shield.withheld
    instructions = entry["instructions"] or ""
    assert all(guard.on_instructions(entry["server"], instructions) == instructions for guard in shield.guards)


async def test_all_defences_ask_no_review_of_a_published_tool(tmp_path):
    reviewed = {}
    for entry in SERVERS:
        shield, _ = await _host(tmp_path / entry["server"], NO_PINS, [entry])
        reviewed |= next(g for g in shield.guards if isinstance(g, ScanGuard)).reviewed
    assert not reviewed, reviewed


async def test_all_defences_offer_every_published_tool_with_all_published_servers_in_one_host(tmp_path):
    shield, _ = await _host(tmp_path, NO_PINS, SERVERS)
    assert not shield.withheld, shield.withheld


def test_the_scanner_finds_nothing_to_block_in_a_published_definition_on_its_own():
    found = {
        (entry["server"], tool["name"]): [f.rule for f in scan_tool(tool) if f.severity == "block"]
        for entry in SERVERS
        for tool in entry["tools"]
    }
    assert not {key: rules for key, rules in found.items() if rules}


def test_notebook_07s_benign_measure_is_the_published_set_and_flags_none_of_it():
    """What §3 prints: every published tool and the lab's own, in one host as the shield runs it; nothing withheld,
    nobody asked."""
    assert len(published_tools()) == sum(len(entry["tools"]) for entry in SERVERS) >= 100
    assert false_flags().empty, false_flags().to_dict("records")
