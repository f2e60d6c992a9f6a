"""The event and step tables: DataFrames shown the way the lesson reads (imported when a table is drawn)."""

from __future__ import annotations

import html
from collections.abc import Mapping
from typing import Any, ClassVar

import pandas as pd

from labkit._i18n import _

from ._labels import EVENT_HEADINGS

__all__ = ["EventTable", "HeadedTable", "StepTable"]

_SHORT_ID = 10  # characters of an id shown in a table; the whole id is on hover
_TABLE_STYLE = (
    "<style>.labkit-events th, .labkit-events td {text-align: left; vertical-align: top}"
    " .labkit-events td.summary {min-width: 28em; white-space: normal}</style>"
)
_HEADINGS = EVENT_HEADINGS


def _heading(column: str) -> str:
    shown = _(_HEADINGS[column]) if column in _HEADINGS else column
    title = f" title='{html.escape(column)}'" if shown != column else ""
    return f"<th{title}>{html.escape(shown)}</th>"


def _shown(table: pd.DataFrame, headings: Mapping[Any, str] = _HEADINGS) -> pd.DataFrame:
    """`table` with its headings, and the row labels it names, in the learner's language (a copy for display)."""

    def said(label: Any) -> Any:
        return _(headings[label]) if isinstance(label, str) and label in headings else label

    shown = pd.DataFrame(table).rename(columns=said, index=said)
    shown.index.name = said(table.index.name)
    return shown


class EventTable(pd.DataFrame):
    """The events as a DataFrame that JupyterLab shows the way the lesson reads (notebook 00).

    Shown: from → to, kind and a wide left-aligned summary first, ids shortened (the whole id on
    hover). The data keeps every column; a selection from it (`.loc`, `.head()`, `[["from", "to"]]`,
    `.assign(...)`) is a `HeadedTable` that keeps the headings in the learner's language.
    """

    _metadata: ClassVar[list[str]] = ["headings"]
    headings: Mapping[str, str] = _HEADINGS

    @property
    def _constructor(self) -> type[pd.DataFrame]:
        return HeadedTable

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
    """The steps as a DataFrame whose headings are in the learner's language, a selection from it too (notebook 03)."""

    _metadata: ClassVar[list[str]] = ["headings"]
    headings: Mapping[str, str] = _HEADINGS

    @property
    def _constructor(self) -> type[pd.DataFrame]:
        return HeadedTable

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
