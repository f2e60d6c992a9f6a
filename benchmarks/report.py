"""The printed table and the JSON file: one row per figure, measured value next to its target."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

__all__ = ["Row", "rows_for", "table", "write_json"]

_NAMES = {"memory": "in-memory", "stdio": "stdio", "http": "Streamable HTTP"}


@dataclass(frozen=True)
class Row:
    figure: str
    measured: str
    target: str = ""
    verdict: str = ""


def table(rows: list[Row]) -> str:
    """A plain-text table that reads the same in a terminal, a log and a README code block."""
    header = Row("figure", "measured", "target", "")
    widths = [max(len(getattr(r, f)) for r in [header, *rows]) for f in ("figure", "measured", "target", "verdict")]
    lines = []
    for index, row in enumerate([header, *rows]):
        cells = [row.figure, row.measured, row.target, row.verdict]
        lines.append("  ".join(c.ljust(w) for c, w in zip(cells, widths, strict=True)).rstrip())
        if index == 0:
            lines.append("  ".join("-" * w for w in widths))
    return "\n".join(lines)


def write_json(results: dict[str, Any], path: Path) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(results, indent=1, default=str) + "\n", encoding="utf-8")
    return path


def rows_for(results: dict[str, Any]) -> list[Row]:
    rows: list[Row] = []
    for section, build in _SECTIONS.items():
        if section not in results:
            continue
        data = results[section]
        if "error" in data:
            rows.append(Row(f"{section}", f"FAILED: {data['error'][:110]}", "", "error"))
        elif "skipped" in data:
            rows.append(Row(f"{section}", f"skipped: {data['skipped']}"))
        else:
            rows.extend(build(data))
    return rows


def _verdict(ok: bool) -> str:
    return "ok" if ok else "OVER"


def _tracing(data: dict[str, Any]) -> list[Row]:
    rows = []
    for transport, r in data.items():
        if transport not in _NAMES:
            continue
        rows.append(
            Row(
                f"1 tracing, {_NAMES[transport]}",
                f"traced/bare {r['ratio']:.3f} ({r['baseline_ms']:.2f} vs {r['subject_ms']:.2f} ms, "
                f"{r['extra_ms'] * 1000:+.0f} us/call; A/A {r['control_ratio']:.3f})",
                f"<= {r['target_ratio']:.2f}",
                _tracing_verdict(r),
            )
        )
    return rows


def _tracing_verdict(r: dict[str, Any]) -> str:
    """ok under the target; `noise?` when the excess is smaller than the A/A control's own deviation."""
    if r["meets_target"]:
        return "ok"
    return "noise?" if r["ratio"] <= r["target_ratio"] + abs(r["control_ratio"] - 1) else "OVER"


def _model(data: dict[str, Any]) -> list[Row]:
    rows = []
    for api, r in data.items():
        if not isinstance(r, dict) or "median_ms" not in r:
            continue
        m = r["median_ms"]
        rows.append(
            Row(
                f"2 model turn, {api}",
                f"SDK+tap/decide {r['ratio']:.0f}x, +{r['per_call_ms']:.2f} ms/call "
                f"(decide {m['decide']:.3f}, handler {m['handle']:.2f}, SDK {m['sdk']:.2f}, tap {r['tap_ms']:+.2f} ms)",
                "report",
                "info",
            )
        )
    return rows


def _canonical(data: dict[str, Any]) -> list[Row]:
    m, memory = data["median_s"], data["memory"]
    return [
        Row(
            f"3 canonical run ({data['transport']}, median of {data['runs']})",
            f"{m['wall']:.2f} s wall (first run in process {data['first_run_s']['wall']:.2f} s)",
            f"<= {data['target_s']:.0f} s",
            _verdict(data["meets_target"]),
        ),
        Row(
            "3   split",
            f"start-up {m['startup']:.2f} | protocol {m['protocol']:.2f} | model {m['model']:.3f} | "
            f"host {m['host']:.3f} | shutdown {m['shutdown']:.2f} s",
        ),
        Row(
            "6 memory, canonical runs",
            f"peak {memory['peak_total_mib']:.0f} MiB RSS (this process "
            f"{memory['peak_process_mib']:.0f} + servers {memory['peak_children_mib']:.0f}), "
            f"{memory['peak_pss_mib']:.0f} MiB PSS",
            "report",
            "info",
        ),
    ]


def _processes(data: dict[str, Any]) -> list[Row]:
    rows = []
    for figure in ("run", "import", "start", "http start", "kernel"):
        r = data[figure]
        if "skipped" in r:
            rows.append(Row(f"8 {figure}", r["skipped"], "", "skipped"))
            continue
        reported = r["target_ratio"] is None
        rows.append(
            Row(
                f"8 {r['subject']} / {r['baseline']}",
                f"{r['ratio']:.2f} ({r['subject_ms'] / 1000:.2f} vs "
                f"{r['baseline_ms'] / 1000:.2f} s, median of {r['samples']}, {_WHAT_IS_TIMED[figure]})",
                "report" if reported else f"<= {r['target_ratio']}",
                "info" if reported else _verdict(r["meets_target"]),
            )
        )
    return rows


_WHAT_IS_TIMED = {
    "run": "whole processes",
    "import": "whole processes",
    "start": "a lab server up to its tool list",
    "http start": "a lab server over HTTP up to its tool list, both cold",
    "kernel": "a lesson's kernel up to its setup cell's end",
}


def _course(data: dict[str, Any]) -> list[Row]:
    ran = [nb for nb in data["notebooks"] if "seconds" in nb]
    bound = "" if data["complete"] else ">= "
    verdict = (
        "error"
        if not data["all_ok"]
        else _verdict(data["meets_target"])
        if data["complete"]
        else ("OVER" if data["total_s"] > data["target_s"] else "partial")
    )
    rows = [
        Row(
            "4 course run, total",
            f"{bound}{data['total_s']:.1f} s, {len(ran)} of {len(data['notebooks'])} "
            "notebook(s) run" + ("" if data["complete"] else f" within the {data['budget_s']:.0f} s budget"),
            f"<= {data['target_s']:.0f} s",
            verdict,
        )
    ]
    for nb in data["notebooks"]:
        if "seconds" not in nb:
            rows.append(Row(f"4   {nb['notebook']}", nb["status"]))
            continue
        slowest = nb["slowest_cells"][0] if nb["slowest_cells"] else None
        note = f", slowest cell {slowest['cell']} {slowest['seconds']:.1f} s" if slowest else ""
        status = "" if nb["status"] == "complete" else f" ({nb['error'] or nb['status']})"[:80]
        rows.append(Row(f"4   {nb['notebook']}", f"{nb['seconds']:.1f} s{note}{status}"))
    memory = data["memory"]
    rows.append(
        Row(
            "6 memory, course run",
            f"peak {memory['peak_total_mib']:.0f} MiB RSS (this process "
            f"{memory['peak_process_mib']:.0f} + kernels/servers {memory['peak_children_mib']:.0f}), "
            f"{memory['peak_pss_mib']:.0f} MiB PSS",
            "report",
            "info",
        )
    )
    return rows


def _setup(data: dict[str, Any]) -> list[Row]:
    cache = data["pip_cache_before"]
    sources = data.get("pip_sources", {})
    rows = [
        Row(
            "5 fresh setup, clone to first trace",
            f"{data['total_s']:.0f} s" + ("" if data["ok"] else " (DID NOT FINISH)"),
            "report",
            "info" if data["ok"] else "error",
        )
    ]
    for step in data["steps"]:
        rows.append(Row(f"5   {step['step']}", f"{step['seconds']:.1f} s" + ("" if step["ok"] else " FAILED")))
    state = f"{cache['size_mib']:.0f} MiB in {cache['dir']}" if cache["exists"] else f"empty ({cache['dir']} absent)"
    rows.append(
        Row(
            "5   pip cache before",
            f"{state}; install used {sources.get('from_cache', 0)} cached, "
            f"{sources.get('downloaded', 0)} downloaded, {sources.get('local_files', 0)} local-file dists",
        )
    )
    return rows


def _workshop(data: dict[str, Any]) -> list[Row]:
    rows = []
    for label, key in (("one charts server", "single_server"), ("two charts replicas", "two_replicas")):
        for n, r in data[key].items():
            errors = f", {r['errors']} errors" if r["errors"] else ""
            rows.append(
                Row(
                    f"7 workshop, {label}, N={n}",
                    f"{r['tasks_per_s']:.1f} tasks/s, p50 {r['p50_ms'] / 1000:.2f} s, p99 {r['p99_ms'] / 1000:.2f} s "
                    f"({r['tasks']} tasks{errors})",
                    "report",
                    "info" if not r["errors"] else "error",
                )
            )
    control = data["retry_on_replica_with_other_key"]
    outcome = f"rejected, {control['code']}" if control["rejected"] else "ACCEPTED (must be rejected)"
    rows.append(
        Row("7   retry on a replica with another key", outcome, "rejected", "ok" if control["rejected"] else "error")
    )
    probe = data["default_client_name_probe"]
    rows.append(
        Row(
            "7   N learners, default clientInfo name",
            f"{probe['rate_limited']} of {probe['learners']} query_errors calls rate-limited (30/min per name)",
            "report",
            "info",
        )
    )
    return rows


def _faults(data: dict[str, Any]) -> list[Row]:
    return [
        Row(
            f"9   {c['case']}",
            f"{c['seconds']:5.1f} s  {c['processes_left']} left  {c['outcome']}",
            "0 left",
            "ok" if c["processes_left"] == 0 else "LEFT",
        )
        for c in data["cases"]
    ]


def _classroom(data: dict[str, Any]) -> list[Row]:
    room, memory = f"10 a room of {data['learners']}", data["open_lessons_mib"]
    kills = memory["oom_kills_under_1_gib"]
    return [
        Row(
            f"{room}: lesson 03 at once",
            f"{data['delivered']}/{data['learners']} delivered; p50 {data['p50_s']} s, "
            f"p95 {data['p95_s']} s, alone {data['alone_s']} s (p50/alone {data['p50_over_alone']})",
            "all delivered",
            _verdict(data["delivered"] == data["learners"]),
        ),
        Row(
            f"{room}: peak PSS per learner",
            f"{data['peak_pss_per_learner_mib']} MiB (alone {data['alone_peak_pss_mib']} MiB)",
        ),
        Row(
            "10 one learner, lessons left open",
            f"PSS {memory['1_open']} / {memory['3_open']} / "
            f"{memory['9_open']} MiB with 1 / 3 / 9 open; peak {memory['peak']} MiB",
            "< 1024 MiB",
            _verdict(memory["peak"] < 1024),
        ),
        Row(
            "10 ... under a 1 GiB memory cgroup",
            f"{kills} OOM kills" if isinstance(kills, int) else kills,
            "0",
            _verdict(kills == 0) if isinstance(kills, int) else "",
        ),
        Row(
            "10 left running after the hubs stopped",
            f"{data['left_running_alone'] + data['left_running_room']}",
            "0",
            _verdict(data["left_running_alone"] + data["left_running_room"] == 0),
        ),
    ]


_SECTIONS = {
    "tracing": _tracing,
    "model": _model,
    "canonical": _canonical,
    "processes": _processes,
    "workshop": _workshop,
    "course": _course,
    "setup": _setup,
    "faults": _faults,
    "classroom": _classroom,
}
