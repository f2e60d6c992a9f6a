"""The claims notebook prose makes about its own run, each tied to the cell whose stored output shows it.

A sentence in a lesson that states a run's number or outcome ("every attack succeeded undefended") is true only
while the output says so. Each claim names words of the English prose (`says`), words of the code cell that
computes it (`shown_by`) and what that cell's stored output must show (`shows`, a regular expression) and must not
(`never`). The output pattern is written to hold in both languages: the Chinese edition runs the same cell, and
`tests/test_prose.py` checks its output too. Change the prose and the claim's `says` fails: look at the claim again.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Claim:
    notebook: str
    says: str
    shown_by: str
    shows: str = ""
    never: str = ""


CLAIMS = (
    Claim(
        "00",
        says="splits the task into **19 steps**: Host 9, MCP Server 4, Model 3, User 2,",
        shown_by="len(run.steps)",
        shows=r"\b9\b.*\b4\b.*\b3\b.*\b2\b.*\b1\b.*\b19\b",
    ),
    Claim(
        "02",
        says="clamps any other number into that range",
        shown_by='"limit applied"',
        shows=r"(?m)^\d+\s+\{'status'",
        never=r"(?m)\s(?:5[1-9]|[6-9]\d|[1-9]\d{2,})\s+\d+\s*$",
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
        shows=r"(?:; | )0 (?:flagged|个被标记)",
    ),
)
