"""The claims notebook prose makes about its own run, each tied to the cell whose stored output shows it.

A sentence in a lesson that states a run's number or outcome ("every attack succeeded undefended") is true only
while the output says so. Each claim names words of the English prose (`says`), words of the code cell that
computes it (`shown_by`) and what that cell's stored output must show (`shows`, a regular expression) and must not
(`never`), or, for a comparison between numbers of a table the cell shows, a predicate over that table's body rows
(`holds`: each row its label, then its cells, in the order the cell prints them). Patterns and predicates hold in
both languages: the Chinese edition runs the same cell (its labels translated, its numbers and row order the same),
and `tests/test_prose.py` checks its output too. Change the prose and the claim's `says` fails: look at the claim
again.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

Rows = list[list[str]]


@dataclass(frozen=True)
class Claim:
    notebook: str
    says: str
    shown_by: str
    shows: str = ""
    never: str = ""
    holds: Callable[[Rows], bool] | None = None


def _n(rows: Rows, row: int, column: int) -> int:
    """The number in a table's body row `row`, column `column` (0 is the row's label)."""
    return int(rows[row][column])


# notebook 08's cost table, in the order its cell builds the runs: 2, 20 and 56 tools; 56 pruned, deferred, cached;
# the endless loop capped at 8 and at 3 rounds. Columns: model requests, tools sent, tool tokens per request
# (loaded), per run (loaded), per run (billed as), whole requests per run.
_TOOLS_56, _PRUNED, _DEFERRED, _CACHED, _CAP_8, _CAP_3 = 2, 3, 4, 5, 6, 7
_REQUESTS, _SENT, _PER_REQUEST, _PER_RUN, _BILLED, _WHOLE = 1, 2, 3, 4, 5, 6


CLAIMS = (
    Claim(
        "00",
        says="splits the task into **19 steps**: Host 9, MCP Server 4, Model 3, User 2,",
        shown_by="len(run.steps)",
        shows=r"\b9\b.*\b4\b.*\b3\b.*\b2\b.*\b1\b.*\b19\b",
    ),
    Claim(
        "01",
        says="The model then proposes one call per turn, the next once the host has answered the last",
        shown_by="parallel=False)",
        shows=r"(?m)^\[ToolCall\([^\n]*'family'[^\n]*\)\]\n\[ToolCall\([^\n]*'personal'[^\n]*\)\]\n\[simulated\]",
    ),
    Claim(
        "02",
        says="clamps any other number into that range",
        shown_by='"limit applied"',
        shows=r"(?m)^\d+\s+\{'status'",
        never=r"(?m)\s(?:5[1-9]|[6-9]\d|[1-9]\d{2,})\s+\d+\s*$",
    ),
    Claim(
        "02",
        says="Every list also came back full, as long as its limit",
        shown_by='"limit applied"',
        holds=lambda rows: all(row[-1] == row[-2] for row in rows),
    ),
    Claim(
        "02", says="The JSON-RPC frames are identical", shown_by='"identical": frames[0] == frames[1]', shows=r"True\}"
    ),
    Claim(
        "07",
        says="the careless launch adds a secret on purpose",
        shown_by='"OPS_DEPLOY_TOKEN": env.get(',
        shows=r"OPS_DEPLOY_TOKEN\s+lab07-canary-token-8d2e4b",
    ),
    Claim(
        "07",
        says="every one of the planted attacks succeeded with no defences and was blocked with all",
        shown_by='succeeded = sum(runs[name, "off"].succeeded',
        shows=r"'(\d+)/\1'.*'(\d+)/\2'",
        never=r"'0/",
    ),
    Claim(
        "07",
        says="the scanner flagged none of the benign tools",
        shown_by="flags = false_flags()",
        shows=r"(?:; | )0 (?:flagged|withheld or reviewed)|其中 0 个(?:被标记|被扣下)",
    ),
    Claim(
        "07",
        says="refused the read of `~/.ssh/id_rsa` before anyone was asked",
        shown_by='story(runs["result-injection", "on"])',
        shows=r"untrusted\.files__read_file[:：]\s*(?:blocked|拦下)",
        never=r"approve untrusted\.files__read_file|上的 untrusted\.files__read_file",
    ),
    Claim(
        "07",
        says="No hidden character reaches the model in either run",
        shown_by='print(reveal(received["content"][0]["content"]))',
        shows=r"Agent",
        never="⟦",
    ),
    Claim(
        "07",
        says="the twelve tag characters in the table above are in the server's",
        shown_by='("result-injection", "on"): Defences.all()})',
        shows=r"⟦12 (?:tag characters|个标签字符)",
    ),
    Claim(
        "07",
        says="And the person refused the message to `exfil.example`",
        shown_by='story(runs["result-injection", "on"])',
        shows=r"(?:refused|拒绝了?) untrusted\.sink__send_message",
    ),
    Claim(
        "06",
        says="A file that breaks several rules gets every message at once",
        shown_by="for folder, text in broken:",
        shows=r"'Plan_Questions'[^\n]*\n\s+- [^\n]*\n\s+- ",
    ),
    Claim(
        "06",
        says="the *yes* row counts two calls sent, the call and its retry carrying the answer to the form",
        shown_by='"calls sent": len(run.sent)',
        shows=r"(?m)^yes\s+2\s",
    ),
    Claim(
        "06",
        says="the `approved` field the gate ignored is gone, and the schema's default for `until` is filled in",
        shown_by="labkit.table(trace_yes,",
        shows=r'tools/call render_error_trend \{[^}\n]*"until":null',
        never=r'tools/call render_error_trend \{[^}\n]*"approved"',
    ),
    Claim(
        "08",
        says="The call went through the host's gate and the same tapped client",
        shown_by='labkit.table(clock, kinds=["jsonrpc.request", "jsonrpc.response", "host.gate"])',
        shows=r"host\.gate",
    ),
    Claim(
        "10",
        says="The last frame, `notifications/cancelled`, names the listen request it ends",
        shown_by="subscription_frames = (",
        shows=r"notifications/cancelled listen-",
    ),
    Claim(
        "10",
        says="One baseline case is already a false call",
        shown_by="baseline = await labkit.run_tool_eval(tools)",
        holds=lambda rows: rows[0][-1] == "1",
    ),
    Claim(
        "04",
        says="With a cap of 1 the call completes; with a cap of 0",
        shown_by="for cap in (1, 0):",
        shows=r"\b1\s+completed: .*\b0\s+isError: ",
        never=r"manually",  # "the host turns that into an error result the model can read", not the SDK's advice
    ),
    Claim(
        "08",
        says="**Pruning** removes the cost",
        shown_by="labkit.cost_summary(runs)",
        holds=lambda rows: (
            _n(rows, _PRUNED, _SENT) == 1 and _n(rows, _PRUNED, _PER_RUN) < _n(rows, _TOOLS_56, _PER_RUN)
        ),
    ),
    Claim(
        "08",
        says="the `whole requests` column even grows",
        shown_by="labkit.cost_summary(runs)",
        holds=lambda rows: (
            _n(rows, _DEFERRED, _WHOLE) > _n(rows, _TOOLS_56, _WHOLE)
            and _n(rows, _DEFERRED, _PER_REQUEST) < _n(rows, _TOOLS_56, _PER_REQUEST)
        ),
    ),
    Claim(
        "08",
        says="so this run takes no more requests than the one that loads all 56",
        shown_by="labkit.cost_summary(runs)",
        holds=lambda rows: _n(rows, _DEFERRED, _REQUESTS) == _n(rows, _TOOLS_56, _REQUESTS),
    ),
    Claim(
        "08",
        says="adds a few tokens of its own (the mark is part of every request)",
        shown_by="labkit.cost_summary(runs)",
        holds=lambda rows: (
            0 < _n(rows, _CACHED, _PER_REQUEST) - _n(rows, _TOOLS_56, _PER_REQUEST) < 100
            and _n(rows, _CACHED, _BILLED) < _n(rows, _CACHED, _PER_RUN)
        ),
    ),
    Claim(
        "08",
        says="bounds what a stuck model can spend",
        shown_by="labkit.cost_summary(runs)",
        holds=lambda rows: (
            _n(rows, _CAP_8, _REQUESTS) == 8
            and _n(rows, _CAP_3, _REQUESTS) == 3
            and _n(rows, _CAP_3, _PER_RUN) < _n(rows, _CAP_8, _PER_RUN)
        ),
    ),
)
