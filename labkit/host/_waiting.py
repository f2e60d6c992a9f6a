"""A form waiting for a person is found: brought into view, named atop its notebook; a stopped wait says why."""

from __future__ import annotations

import asyncio
import html
import json
import re
import uuid
from collections.abc import Iterable
from typing import Any

from labkit._i18n import N_, _
from labkit._notebook_errors import interrupted, show_errors_plainly

from ._rerun import Waited, wait_for_click

__all__ = ["FORM_FALLBACK", "WaitingForm"]

FORM_FALLBACK = N_(
    "[form: drawn here while this cell runs in JupyterLab. Reopened the notebook while it waited and "
    "see no form? Run → Run All Cells asks again.]"
)
"""What a saved notebook shows where a form was still waiting (tools/notebooks.py writes it in place of a widget
that has no text of its own)."""

FORM_ANSWERED = N_(
    "[form: {subject} → {line}. Reopened the notebook while a form waited and see none? Run → Run All Cells asks "
    "again.]"
)
"""What a saved notebook shows where a form was answered: what it asked and its last word, the scripted user's answer
under CI (a form's view is dead in a stored notebook, so its answer must be in the text); and, like the waiting
text, the way back to a form for a learner who reopens the notebook while its kernel still waits (an unsaved notebook
opens with its committed lines)."""

_WAITING = "labkit-waiting"
"""The executions (IPython's execution count) in which an interrupt stopped a waiting form."""


class WaitingForm:
    """One form shown to a person (a `widget_form` or an approval, notebooks 03, 04 and 07).

    In JupyterLab a small script in the form keeps it found: it scrolls the form into view and focuses
    it as soon as it is drawn, whatever the notebook's scroll position, puts "a form is waiting" at the
    top of the notebook and in the tab's title until it is answered, and, if the kernel restarts while
    it waits, replaces "waiting" by what happened and what to press.
    """

    def __init__(self, form: Any, status: Any, controls: Iterable[Any], *, subject: str) -> None:
        self.form, self.status, self.controls, self.subject = form, status, list(controls), subject
        self._stored = _(FORM_FALLBACK)
        self._handle: Any = None
        self.key = f"labkit-form-{uuid.uuid4().hex[:12]}"
        form.add_class("labkit-form")
        form.add_class(self.key)
        status.add_class("labkit-form-status")

    def show(self, *, live: bool) -> None:
        """Display the form; `live` (a person will answer) adds the script that brings it into view. A form closed
        before it is shown (the scripted user's) carries its answer in its text from the start."""
        import ipywidgets as widgets
        from IPython.display import Javascript, display

        if live:
            self.form.add_class(_WAITING)
            script = widgets.Output()
            script.append_display_data(Javascript(self.page_script()))
            self.form.children = (*self.form.children, script)
        self._handle = display(_Shown(self.form, self._stored), display_id=True)

    def page_script(self) -> str:
        """The JavaScript that keeps this form found in the page (run by JupyterLab where the form is drawn)."""
        return _SCRIPT.replace("CONFIG", json.dumps(self._texts()))

    async def wait(self, answer: asyncio.Future[Any], timeout: float) -> Waited:
        """Wait for a click (see `wait_for_click`); an interrupt closes the form, and the cell says so in one line.

        The cancellation itself goes on unchanged (the form may wait in the SDK's task, not the cell's): only
        what the learner reads changes, the cell's CancelledError shown as one line instead of its traceback.
        """
        show_errors_plainly()
        try:
            return await wait_for_click(answer, timeout)
        except (asyncio.CancelledError, KeyboardInterrupt):
            self.close(
                _(
                    "■ stopped: the kernel was interrupted while this form waited, so nothing was sent. Run "
                    "this cell again (or Run All) to be asked again."
                )
            )
            interrupted(
                _(
                    "The kernel was interrupted while a form waited for your answer: nothing was "
                    "sent. Run this cell again, or Run All, to be asked again."
                )
            )
            raise

    def close(self, line: str) -> None:
        """The form's last word: its status line, its controls disabled, and its notice taken down."""
        self.status.value = line
        for control in self.controls:
            control.disabled = True
        self.form.remove_class(_WAITING)
        # The output's text is replaced in place (update_display_data): a saved notebook keeps the answer.
        plain = " ".join(html.unescape(re.sub(r"<[^>]+>", " ", line)).split())
        self._stored = _(FORM_ANSWERED).format(subject=self.subject, line=plain)
        if self._handle is not None:
            self._handle.update(_Shown(self.form, self._stored))

    def _texts(self) -> dict[str, str]:
        return {
            "key": self.key,
            "banner": _("► A form is waiting for your answer: click here to show it"),
            "title": _("► answer the form"),
            "restarted": _(
                "■ stopped: the kernel restarted (or stopped) while this form waited, so nothing was sent. "
                "Run → Run All Cells (or run this cell) to be asked again."
            ),
        }


class _Shown:
    """A widget displayed with a one-line text fallback: what a saved notebook shows where the form was, including
    to a learner who closed the tab while it waited and opened the notebook again (the kernel still waits)."""

    def __init__(self, widget: Any, text: str) -> None:
        self.widget, self.text = widget, text

    def _repr_mimebundle_(self, **kwargs: Any) -> dict[str, Any]:
        bundle = self.widget._repr_mimebundle_(**kwargs)
        bundle["text/plain"] = self.text
        return bundle


# Runs in the page, once per form (the view may be drawn again). It finds the form by its own class (each form's
# is unique, even across notebooks whose kernels number their forms alike), scrolls it to the middle of its
# notebook until it has stayed in view for a second (Run All scrolls too) and focuses its first control. JupyterLab
# marks the widgets of a kernel that restarted or stopped `jupyter-widgets-disconnected`: the form then says so
# instead of "waiting". The notice in each notebook's toolbar and the tab's title are not a form's: one keeper per
# page (the first form's script starts it) makes them follow what is on the page, each notebook with one banner
# while any of its forms waits and none otherwise, so a form whose output was cleared (its cell run again) leaves
# no banner behind and two forms never make two.
_SCRIPT = """
(() => {
  const cfg = CONFIG;
  const keeper = window.labkitWaitingKeeper || (window.labkitWaitingKeeper = (() => {
    const texts = {}, titles = new Set();
    const keyOf = (form) => [...form.classList].find(c => c in texts);
    const retitle = (waiting) => {
      let bare = document.title;
      for (const t of titles) if (bare.startsWith(t + ' · ')) bare = bare.slice(t.length + 3);
      const want = waiting ? texts[keyOf(waiting)].title + ' · ' + bare : bare;
      if (document.title !== want) document.title = want;
    };
    const keep = () => {
      for (const panel of document.querySelectorAll('.jp-NotebookPanel')) {
        const waiting = [...panel.querySelectorAll('.labkit-form.labkit-waiting')].find(keyOf);
        const toolbar = panel.querySelector('.jp-NotebookPanel-toolbar');
        const banners = [...panel.querySelectorAll('.labkit-waiting-banner')];
        banners.slice(waiting && toolbar ? 1 : 0).forEach(b => b.remove());
        if (!waiting || !toolbar) continue;
        const banner = banners[0] || document.createElement('div');
        banner.textContent = texts[keyOf(waiting)].banner;
        if (banners[0]) continue;
        banner.className = 'labkit-waiting-banner';
        banner.style.cssText = 'background:#fff3cd;color:#664d03;border:1px solid #e0b000;border-radius:3px;' +
          'padding:0 8px;margin:0 6px;font-weight:bold;cursor:pointer;align-self:center;white-space:nowrap';
        banner.onclick = () => {
          const form = panel.querySelector('.labkit-form.labkit-waiting');
          if (form) form.scrollIntoView({block: 'center'});
        };
        toolbar.insertBefore(banner, toolbar.querySelector('.jp-Toolbar-spacer') || null);
      }
      retitle([...document.querySelectorAll('.labkit-form.labkit-waiting')].find(keyOf));
    };
    setInterval(keep, 250);
    return {add: (c) => { texts[c.key] = c; titles.add(c.title); keep(); }};
  })());
  if (window[cfg.key]) return;
  window[cfg.key] = true;
  let shownFor = 0, settled = false, wasVisible = false, missing = 0;
  const find = () => document.querySelector('.' + cfg.key);
  const tick = () => {
    const form = find();
    if (!form) { if (++missing > 40) clearInterval(timer); return; }
    missing = 0;
    if (form.classList.contains('labkit-waiting') && form.classList.contains('jupyter-widgets-disconnected')) {
      const status = form.querySelector('.labkit-form-status');
      if (status) status.textContent = cfg.restarted;
      form.querySelectorAll('button, input, select, textarea').forEach(c => { c.disabled = true; });
      form.classList.remove('labkit-waiting');
    }
    if (!form.classList.contains('labkit-waiting')) { clearInterval(timer); return; }
    const visible = form.offsetParent !== null;
    if (visible && !wasVisible) { settled = false; shownFor = 0; }
    wasVisible = visible;
    if (!visible || settled) return;
    const box = form.getBoundingClientRect();
    const scroller = form.closest('.jp-WindowedPanel-outer') || form.closest('.jp-NotebookPanel') || document.body;
    const view = scroller.getBoundingClientRect();
    if (box.top >= view.top && box.top + Math.min(box.height, 80) <= view.bottom) {
      if (shownFor === 0) {
        const control = form.querySelector('input:not([disabled]), button:not([disabled])');
        if (control) control.focus({preventScroll: true});
      }
      if (++shownFor >= 4) settled = true;
    } else {
      shownFor = 0;
      form.scrollIntoView({block: 'center'});
    }
  };
  const timer = setInterval(tick, 250);
  keeper.add(cfg);
  tick();
})();
"""
