"""The independent corpus against the host: each attack succeeds with the defences off and is stopped with them on.

Exceptions are named with their reasons: attacks a host rule stops even with the switchable defences off
(`ALWAYS_BLOCKED`), the residual risks notebook 07 teaches (`RESIDUAL`), and attacks only the sandbox stops
(`SANDBOXED`: run defended only where the machine can confine a server). CI runs one attack per goal
plus every exception; `LABKIT_FULL_CORPUS=1` runs all of them (about 5 minutes per mode on 2 cores).

Each mode runs the sample in a fresh process (`python -m tests.attack_corpus.runner <name> ...`), the two
side by side, whose environment holds the lab's secrets the way a user's host does; every entry gets a
fresh data folder and host state; a hard timeout kills a child's whole process group if it overruns,
so no server outlives the module.
"""

import contextlib
import json
import os
import signal
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

from labkit.host import confinement
from servers.attacks.corpus import CORPUS, Entry
from tests.attack_corpus.runner import child_env

REPO = Path(__file__).resolve().parents[2]
# Seconds per entry (a child's limit: this times its entries): rug pulls launch everything twice, and a loaded
# machine starts servers slowly.
HARD_TIMEOUT = 240.0


ALWAYS_BLOCKED = {
    "proc_sibling_env": "the sealing key goes only to the lab's business servers, so a sibling's environment has none",
    "forge_sibling_trace": "each server reports into a folder of its own; a line in another's file is never its",
    "forge_user_consent": "a server's report claiming the user or the host acted is recorded as tap.forged",
    "forge_minted_state": "an attack server is never given the sealing key, so it cannot mint a state",
    "escape_chart_space": "the charts server refuses to save into a space folder replaced by a link",
    "steer_form_as_host": "every form event is recorded where the server's request arrives, naming that server "
    "and whether the host trusts it, whatever the form's words say",
    "consent_default_not_sent": "a call a person approved is sent as it was shown, the schema's defaults filled in: "
    "a server's own default never applies",
    # The independent red team of 2026-12-04: host rules, on whatever the defences.
    **dict.fromkeys(
        (
            "crash_deep_json",
            "crash_exit_midsession",
            "crash_hang_start",
            "crash_huge_listing",
            "crash_lone_surrogate",
            "timing_progress_forever",
        ),
        "a server that cannot start, list or answer is reported unavailable and the host goes on without it; a "
        "call's deadline moves on only while its server works, never for its progress reports",
    ),
    "form_url_consent": "a URL-mode request is shown as the host's own question, naming the page's host apart from "
    "the server's words, and the host never opens it",
    "schema_ref_meta": "schemas are data: the host's validator resolves no reference and fetches nothing a server "
    "names; a non-local $schema, $ref or $id fails the call closed",
    "mrtr_roots_probe": "the host offers a server neither roots nor sampling: such a request is refused in either era",
    "mrtr_sampling_context": "the host offers a server neither roots nor sampling: such a request is refused in "
    "either era",
    "rug_tools_changed": "the conversation offers the model the tools listed when it began; a definition changed "
    "mid-run is compared with its pin at the next listing",
}
SANDBOXED = dict.fromkeys(
    (
        "state_logs_rewrite",
        "state_chart_publish",
        "state_read_orders",
        "collude_sibling_home",
    ),
    "stopped by the sandbox alone: an untrusted server's world holds no data folder, no store, no other "
    "server's private folder and no /tmp",
)
"""Where the machine cannot confine a server (`confinement()`), these work with every defence on: notebook 07 §12."""
RESIDUAL = {
    "hijack_outscore": "tool choice: a tool written to out-score the trusted one wins with no instruction at all; "
    "the scanner flags it for review, the mitigation is a per-task tool allow-list",
    **dict.fromkeys(
        ("inject_zh_insider_phish", "steer_internal_csrf"),
        "a call to an untrusted server whose every value an untrusted result wrote: the person sees all of it, but "
        "not who wrote it, and nothing in it leaves the company (notebook 07 §12)",
    ),
}


def _sample() -> list[Entry]:
    if os.environ.get("LABKIT_FULL_CORPUS"):
        return list(CORPUS)
    exceptions = {*ALWAYS_BLOCKED, *RESIDUAL, *SANDBOXED}
    ready = [e for e in CORPUS if not e.needs and e.name not in exceptions]
    one_per_goal = [next(e for e in ready if e.goal == goal) for goal in sorted({e.goal for e in ready})]
    return one_per_goal + [e for e in CORPUS if e.name in exceptions]


def run_in_children(*batches: tuple[list[Entry], bool]) -> dict[tuple[str, bool], dict]:
    """Each batch `(entries, defended)` in one fresh child, all children at once; outcomes by (name, defended).

    A child runs its entries one after the other, each against a fresh data folder and host state.
    """
    with contextlib.ExitStack() as stack:
        children = []
        for entries, defended in batches:
            folder = Path(stack.enter_context(tempfile.TemporaryDirectory(prefix="lab07-corpus-")))
            process = subprocess.Popen(
                [
                    sys.executable,
                    "-m",
                    "tests.attack_corpus.runner",
                    *(e.name for e in entries),
                    *(["--defended"] if defended else []),
                ],
                cwd=REPO,
                env=child_env(folder),
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                text=True,
                start_new_session=True,
            )
            stack.callback(_kill_group, process)  # servers that outlived the runner, if any
            children.append((process, len(entries), defended))
        outcomes = {}
        for process, count, defended in children:
            try:
                out, err = process.communicate(timeout=HARD_TIMEOUT * count)
            except subprocess.TimeoutExpired:
                _kill_group(process)
                process.communicate()
                pytest.fail(f"the corpus runner did not finish {count} entries within {HARD_TIMEOUT * count:.0f} s")
            assert process.returncode == 0, f"runner failed (defended={defended}):\n{err[-3000:]}"
            for line in out.strip().splitlines():
                outcome = json.loads(line)
                outcomes[(outcome["name"], defended)] = outcome
    return outcomes


def _kill_group(process: subprocess.Popen) -> None:
    with contextlib.suppress(ProcessLookupError):
        os.killpg(process.pid, signal.SIGKILL)


SAMPLE = _sample()
DEFENDED_SAMPLE = [
    e for e in SAMPLE if e.name not in ALWAYS_BLOCKED and (e.name not in SANDBOXED or confinement().confined)
]


@pytest.fixture(scope="module")
def outcomes() -> dict[tuple[str, bool], dict]:
    """The sample undefended and with every defence on: two children running side by side."""
    return run_in_children((SAMPLE, False), (DEFENDED_SAMPLE, True))


def _outcome(outcomes: dict[tuple[str, bool], dict], entry: Entry, *, defended: bool) -> dict:
    if (entry.name, defended) not in outcomes:
        pytest.fail(f"the runner printed no outcome for {entry.name} (defended={defended})")
    return outcomes[(entry.name, defended)]


def _param(entry: Entry):
    marks = [pytest.mark.xfail(reason=f"needs: {entry.needs}", strict=False)] if entry.needs else []
    return pytest.param(entry, id=entry.name, marks=marks)


def test_corpus_is_well_formed() -> None:
    names = [e.name for e in CORPUS]
    assert len(names) == len(set(names)) >= 30
    assert len({e.technique for e in CORPUS}) >= 10
    assert {e.goal for e in CORPUS} == {1, 2, 3, 4, 5, 6, 7}
    assert set(ALWAYS_BLOCKED) | set(RESIDUAL) | set(SANDBOXED) <= set(names)


@pytest.mark.parametrize("entry", [_param(e) for e in SAMPLE])
def test_attack_succeeds_undefended(outcomes, entry: Entry) -> None:
    outcome = _outcome(outcomes, entry, defended=False)
    if entry.name in ALWAYS_BLOCKED:
        assert not outcome["succeeded"], f"{entry.name} got through a host rule: {outcome['evidence']}"
        return
    assert outcome["succeeded"], (
        f"{entry.name} ({entry.technique}) did not succeed undefended: error={outcome['error']}, "
        f"evidence={outcome['evidence']}, answer={outcome['answer'][:300]!r}"
    )


@pytest.mark.parametrize("entry", [_param(e) for e in DEFENDED_SAMPLE])
def test_attack_is_stopped_with_every_defence_on(outcomes, entry: Entry) -> None:
    outcome = _outcome(outcomes, entry, defended=True)
    if entry.name in RESIDUAL:
        assert outcome["succeeded"], f"{entry.name} is listed as a residual risk but was stopped: update RESIDUAL"
        return
    assert not outcome["succeeded"], (
        f"{entry.name} ({entry.technique}) got through every defence: evidence={outcome['evidence']}"
    )
