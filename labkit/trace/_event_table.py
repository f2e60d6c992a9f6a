"""The event and step tables: DataFrames shown the way the lesson reads (imported when a table is drawn)."""

from __future__ import annotations

import html
from collections.abc import Mapping
from typing import Any, ClassVar

import pandas as pd

from labkit._i18n import N_, _

__all__ = ["EVENT_HEADINGS", "EventTable", "HeadedTable", "StepTable"]

_SHORT_ID = 10  # characters of an id shown in a table; the whole id is on hover
_TABLE_STYLE = (
    "<style>.labkit-events th, .labkit-events td {text-align: left; vertical-align: top}"
    " .labkit-events td.summary {min-width: 28em; white-space: normal}</style>"
)
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


def _heading(column: str) -> str:
    shown = _(EVENT_HEADINGS[column]) if column in EVENT_HEADINGS else column
    title = f" title='{html.escape(column)}'" if shown != column else ""
    return f"<th{title}>{html.escape(shown)}</th>"


def _shown(table: pd.DataFrame, headings: Mapping[Any, str] = EVENT_HEADINGS) -> pd.DataFrame:
    """`table` with its headings in the learner's language (a copy for display)."""
    shown = pd.DataFrame(table).rename(columns=lambda c: _(headings[c]) if c in headings else c)
    shown.index.name = _(headings[table.index.name]) if table.index.name in headings else table.index.name
    return shown


class EventTable(pd.DataFrame):
    """The events as a DataFrame that JupyterLab shows the way the lesson reads (notebook 00).

    Shown: from → to, kind and a wide left-aligned summary first, ids shortened (the whole id on
    hover). The data keeps every column; anything derived from it is a plain DataFrame.
    """

    @property
    def _constructor(self) -> type[pd.DataFrame]:
        return pd.DataFrame

    def _repr_html_(self) -> str:
        columns = ["seq", "round", *(c for c in self.columns if c not in ("round", "from", "to"))]
        route = _("from → to")
        head = "".join(map(_heading, columns[:2])) + f"<th>{html.escape(route)}</th>"
        head += "".join(map(_heading, columns[2:]))
        body = "".join(f"<tr><th>{seq}</th>{self._cells(row)}</tr>" for seq, row in self.iterrows())
        count = _("{n} events").format(n=len(self))
        # A box of its own that scrolls sideways: a table wider than the notebook (a 1366 px laptop) is never cut
        # off. Its style is inline: JupyterLab's sanitizer drops the <style> above from a notebook's stored outputs.
        return (
            f"{_TABLE_STYLE}<div class='labkit-scroll' style='overflow-x: auto; max-width: 100%'>"
            f"<table class='dataframe labkit-events'><thead><tr>{head}</tr></thead>"
            f"<tbody>{body}</tbody></table></div><p>{count}</p>"
        )

    @staticmethod
    def _cells(row: pd.Series) -> str:
        route = html.escape(f"{row['from']} → {row['to']}")
        cells = [f"<td>{row['round']}</td>", f"<td>{route}</td>"]
        for column, value in row.items():
            if column in ("round", "from", "to"):
                continue
            text = html.escape(str(value))
            if column == "id" and len(text) > _SHORT_ID:
                text = f"<span title='{text}'>{text[: _SHORT_ID - 1]}…</span>"
            cells.append(f"<td class='{column}'>{text}</td>")
        return "".join(cells)

    def __repr__(self) -> str:
        return repr(_shown(self))


class StepTable(pd.DataFrame):
    """The steps as a DataFrame whose headings are in the learner's language (notebook 03)."""

    @property
    def _constructor(self) -> type[pd.DataFrame]:
        return pd.DataFrame

    def _repr_html_(self) -> str | None:
        shown: Any = _shown(self)  # pandas-stubs does not declare the notebook display hook
        return shown._repr_html_()

    def __repr__(self) -> str:
        return repr(_shown(self))


class HeadedTable(pd.DataFrame):
    """A table whose headings are shown in the learner's language while its data keeps the field names the
    learner's code indexes; a selection from it (`every[["attack", "evidence"]]`) is shown the same way (notebook 07).
    """

    _metadata: ClassVar[list[str]] = ["headings"]
    headings: Mapping[str, str] = {}
    """Field name → its heading, a message marked with `N_` (translated when shown)."""

    @property
    def _constructor(self) -> type[pd.DataFrame]:
        return HeadedTable

    def _repr_html_(self) -> str | None:
        shown: Any = _shown(self, self.headings)  # pandas-stubs does not declare the notebook display hook
        return shown._repr_html_()

    def __repr__(self) -> str:
        return repr(_shown(self, self.headings))
