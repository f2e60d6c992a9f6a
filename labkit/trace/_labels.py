"""What a diagram writes: each actor's name, and an arrow's label in at most two short lines (notebook 00)."""

from __future__ import annotations

from .._i18n import N_
from ._columns import wrap_columns
from ._summaries import find_fold, hidden_marker

__all__ = ["ACTOR_LABELS", "EVENT_HEADINGS", "diagram_label"]

ACTOR_LABELS = {  # English; drawn through _() in the learner's language
    "user": N_("User"),
    "host": N_("Host"),
    "model": N_("Model"),
    "client": N_("MCP client"),
    "server": N_("MCP server"),
    "system": N_("Business system"),
    "auth": N_("Authorization server"),
}
# A column keeps its field name in the data (the learner's code indexes it); only its heading is in the learner's
# language, the field name on hover.
EVENT_HEADINGS = {
    "seq": N_("seq"),
    "round": N_("round"),
    "from": N_("from"),
    "to": N_("to"),
    "kind": N_("kind"),
    "summary": N_("summary"),
    "name": N_("name"),
    "server": N_("server"),
    "ms": N_("ms"),
    "step": N_("step"),
    "actor": N_("actor"),
    "events": N_("events"),
}
# Columns per line (a Chinese character takes two) and lines per arrow label: six actors then fit a notebook
# cell at labels >= 11 px, in either language, on a 1366x768 laptop at 100 % with the file browser open (26
# columns drew them at 10.8 px there; tests/browser/test_classroom.py measures them).
_LABEL_WIDTH, _LABEL_LINES = 22, 2


def diagram_label(text: str) -> list[str]:
    """An arrow's label as at most two short lines, cut once; the table has the whole text (notebook 00).

    A summary already folded (`head…(+N chars)…tail`) is cut from the text it stood for: the label
    keeps the start and one marker counts every character of the original it does not show.
    """
    folded = find_fold(text)
    lines = wrap_columns(text, _LABEL_WIDTH) or [""]
    if folded is None and len(lines) <= _LABEL_LINES:
        return lines
    total = len(text) - len(folded.group()) + int(folded["more"]) if folded else len(text)
    kept = (text[: folded.start()] if folded else text)[: _LABEL_WIDTH * _LABEL_LINES]
    while True:
        lines = wrap_columns(kept.rstrip() + hidden_marker(total - len(kept.rstrip())), _LABEL_WIDTH)
        if len(lines) <= _LABEL_LINES or not kept:
            return lines[:_LABEL_LINES]
        kept = kept[:-1]
