"""Simulated thinking: the decision notes as a thinking block (Anthropic) or reasoning item (Responses), signed.

A real model's reasoning is hidden work it hands back sealed: Anthropic signs each `thinking` block and
OpenAI's Responses API pairs each `function_call` with the `reasoning` item before it. Both APIs refuse
the next request if the host drops or edits that piece. The simulator does the same with its own notes,
which is all the "thinking" it has, and says so.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
from typing import Any

from labkit._i18n import _, clauses

from ._dialogue import Decision

__all__ = ["reasoning_requested", "sign", "signed", "thinking_requested", "thinking_text"]

# Not a secret: a signature only has to show that the text came back unchanged.
_KEY = b"teaching-model-SIMULATED thinking signature"


def thinking_text(decision: Decision) -> str:
    """What the simulated model "thought": its decision notes, labelled simulated (notebook 01)."""
    notes = clauses(decision.notes) or _("no tool scores to weigh")
    return _("[simulated] My decision notes, not a real model's reasoning: {notes}").format(notes=notes)


def sign(text: str) -> str:
    """The signature a thinking block carries; any change to the text makes it fail (notebook 01)."""
    return "sim_sig_" + base64.b64encode(hmac.new(_KEY, text.encode(), hashlib.sha256).digest()).decode()


def signed(block: dict[str, Any]) -> bool:
    return hmac.compare_digest(str(block.get("signature", "")), sign(str(block.get("thinking", ""))))


def thinking_requested(body: dict[str, Any]) -> bool:
    """Anthropic `thinking: {"type": "enabled" | "adaptive"}` (not "disabled")."""
    thinking = body.get("thinking")
    return isinstance(thinking, dict) and thinking.get("type") in {"enabled", "adaptive"}


def reasoning_requested(body: dict[str, Any]) -> bool:
    """OpenAI Responses `reasoning: {"effort": ...}` with an effort other than "none"."""
    reasoning = body.get("reasoning")
    return isinstance(reasoning, dict) and reasoning.get("effort") not in (None, "none")
