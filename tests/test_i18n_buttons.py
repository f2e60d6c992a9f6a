"""A button named in a lesson's prose is named as the button itself says it, in either language: the prose's
Chinese takes the button's name from labkit's own catalog, the one the form's buttons are drawn from."""

from __future__ import annotations

import ast
import gettext
import re
from pathlib import Path

import nbformat

ROOT = Path(__file__).resolve().parent.parent
CHINESE = gettext.GNUTranslations((ROOT / "labkit/locale/zh_CN/LC_MESSAGES/labkit.mo").open("rb"))


def button_names() -> set[str]:
    """Every `Button(description=_("..."))` in labkit: the English names the learner clicks."""
    names = set()
    for source in (ROOT / "labkit").rglob("*.py"):
        for node in ast.walk(ast.parse(source.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Call) and getattr(node.func, "attr", getattr(node.func, "id", "")) == "Button":
                for keyword in node.keywords:
                    value = keyword.value
                    if (
                        keyword.arg == "description"
                        and isinstance(value, ast.Call)
                        and getattr(value.func, "id", "") == "_"
                        and value.args
                        and isinstance(value.args[0], ast.Constant)
                        and isinstance(value.args[0].value, str)
                    ):
                        names.add(value.args[0].value)
    return names


def named_in_prose() -> list[tuple[str, str, str, str]]:
    """(notebook, cell id, English button name, the Chinese cell) for each **Button** in an English Markdown cell."""
    buttons = button_names()
    found = []
    for english in sorted((ROOT / "notebooks").glob("*.ipynb")) + sorted((ROOT / "solutions").glob("*.ipynb")):
        chinese = {c.id: c for c in nbformat.read(ROOT / "zh-CN" / english.parent.name / english.name, 4).cells}
        for cell in nbformat.read(english, 4).cells:
            if cell.cell_type == "markdown":
                for name in re.findall(r"\*\*([^*]+)\*\*", cell.source):
                    if name in buttons:
                        found.append((english.name, cell.id, name, chinese[cell.id].source))
    return found


def test_the_buttons_are_found_in_labkit_and_named_in_the_prose() -> None:
    assert {"Submit", "Decline", "Approve", "Refuse"} <= button_names()
    assert {name for _, _, name, _ in named_in_prose()} >= {"Submit", "Refuse"}


def test_the_chinese_prose_names_each_button_as_the_chinese_button_says() -> None:
    wrong = [
        (notebook, cell, name, CHINESE.gettext(name))
        for notebook, cell, name, text in named_in_prose()
        if f"**{CHINESE.gettext(name)}**" not in text or f"**{name}**" in text
    ]
    assert wrong == [], "(notebook, cell, English button, the button's Chinese name, missing from the prose)"
