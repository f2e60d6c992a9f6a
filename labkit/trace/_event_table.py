"""The event table: a DataFrame that JupyterLab shows the way the lesson reads (imported when a table is drawn)."""

from __future__ import annotations

import html

import pandas as pd

from labkit._i18n import _

__all__ = ["EventTable"]

_SHORT_ID = 10  # characters of an id shown in a table; the whole id is on hover
_TABLE_STYLE = (
    "<style>.labkit-events th, .labkit-events td {text-align: left; vertical-align: top}"
    " .labkit-events td.summary {min-width: 28em; white-space: normal}</style>"
)


class EventTable(pd.DataFrame):
    """The events as a DataFrame that JupyterLab shows the way the lesson reads (notebook 00).

    Shown: from → to, kind and a wide left-aligned summary first, ids shortened (the whole id on
    hover). The data keeps every column; anything derived from it is a plain DataFrame.
    """

    @property
    def _constructor(self) -> type[pd.DataFrame]:
        return pd.DataFrame

    def _repr_html_(self) -> str:
        columns = ["round", _("from → to"), *(c for c in self.columns if c not in ("round", "from", "to"))]
        head = "".join(f"<th>{html.escape(c)}</th>" for c in ["seq", *columns])
        body = "".join(f"<tr><th>{seq}</th>{self._cells(row)}</tr>" for seq, row in self.iterrows())
        # A box of its own that scrolls sideways: a table wider than the notebook (a 1366 px laptop) is never cut
        # off. Its style is inline: JupyterLab's sanitizer drops the <style> above from a notebook's stored outputs.
        return (
            f"{_TABLE_STYLE}<div class='labkit-scroll' style='overflow-x: auto; max-width: 100%'>"
            f"<table class='dataframe labkit-events'><thead><tr>{head}</tr></thead>"
            f"<tbody>{body}</tbody></table></div><p>{_('{n} events').format(n=len(self))}</p>"
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
