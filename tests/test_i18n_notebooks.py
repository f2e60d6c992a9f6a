"""The Chinese edition of the notebooks: complete, generated from the English source, and showing no English prose."""

from __future__ import annotations

import ast
import html
import importlib.util
import re
import shutil
import sys
from pathlib import Path

import nbformat
import pytest

ROOT = Path(__file__).resolve().parent.parent
_spec = importlib.util.spec_from_file_location("lab_i18n", ROOT / "tools" / "i18n.py")
assert _spec is not None and _spec.loader is not None, "tools/i18n.py is there"
i18n = importlib.util.module_from_spec(_spec)
sys.modules["lab_i18n"] = i18n
_spec.loader.exec_module(i18n)

ENGLISH = i18n.english_notebooks()
CHINESE = [i18n.generated(path) for path in ENGLISH]
_WORD = r"[A-Za-z][a-z]+(?:'[a-z]+)?"
# Six English words in a row, outside code, is a sentence a Chinese reader should not meet.
_ENGLISH_RUN = re.compile(rf"{_WORD}(?:[ ,;:-]+{_WORD}){{5,}}")
# Code, markup, links, and English quoted on purpose ("the user asks: \"Why did…\"", a spec's words) are not prose.
_NOT_PROSE = re.compile(r"```.*?```|`[^`]*`|<[^>]+>|\[[^\]]*\]\([^)]*\)|https?://\S+|\"[^\"\n]*\"|“[^”]*”", re.S)


def _outputs_text(notebook: nbformat.NotebookNode) -> str:
    parts = []
    for cell in notebook.cells:
        for output in cell.get("outputs", []):
            parts.append(output.get("text", ""))
            data = output.get("data", {})
            parts.extend(str(data.get(kind, "")) for kind in ("text/plain", "text/markdown"))
            parts.append(html.unescape(re.sub(r"<[^>]+>", " ", str(data.get("text/html", "")))))
    return "\n".join(parts)


def _labkit_sentences() -> dict[str, re.Pattern[str]]:
    """Every message labkit can show with three English words or more, as a pattern its filled-in text matches."""
    catalog = i18n._read(i18n.LABKIT_LOCALE / i18n.LANGUAGE / "LC_MESSAGES" / "labkit.po")
    patterns = {}
    for message in catalog:
        for msgid in message.id if isinstance(message.id, tuple) else (message.id,):
            # A placeholder at either end needs no matching (and would make the search slow).
            parts = re.split(r"\{[^}]*\}", (msgid or "").strip())
            while parts and not parts[0].strip():
                parts.pop(0)
            while parts and not parts[-1].strip():
                parts.pop()
            if len(re.findall(_WORD, " ".join(parts))) >= 3:
                patterns[msgid] = re.compile(r".{1,200}?".join(re.escape(part) for part in parts), re.S)
    return patterns


def _is_sentence(text: str) -> bool:
    """Two plain words or more (`stop_reason:` or `resultType=` are field names, not sentences)."""
    return sum(bool(re.fullmatch(r"[A-Za-z]{2,}", word.strip(",.:;!?()"))) for word in text.split()) >= 2


def _printed_labels(code: str) -> set[str]:
    """The sentences a code cell prints as labels (the strings handed straight to print)."""
    try:
        tree = ast.parse("\n".join(line for line in code.splitlines() if not line.lstrip().startswith(("%", "!"))))
    except SyntaxError:
        return set()
    labels: set[str] = set()
    for call in ast.walk(tree):
        if isinstance(call, ast.Call) and isinstance(call.func, ast.Name) and call.func.id == "print":
            for argument in call.args:
                parts = argument.values if isinstance(argument, ast.JoinedStr) else [argument]
                labels.update(
                    p.value.strip()
                    for p in parts
                    if isinstance(p, ast.Constant) and isinstance(p.value, str) and _is_sentence(p.value)
                )
    return labels


def test_every_message_is_translated_and_every_generated_notebook_is_fresh() -> None:
    assert i18n.problems() == []


def test_the_completeness_check_fails_when_a_translation_is_removed(tmp_path: Path, monkeypatch) -> None:
    copy = tmp_path / "locale"
    shutil.copytree(i18n.LOCALE, copy)
    catalog_path = copy / i18n.LANGUAGE / "00_start_here.po"
    catalog = i18n._read(catalog_path)
    removed = next(message for message in catalog if message.id)
    removed.string = ""
    i18n._write(catalog, catalog_path)
    monkeypatch.setattr(i18n, "LOCALE", copy)
    found = i18n.problems()
    assert any("no translation" in problem and "00_start_here.po" in problem for problem in found)


def test_a_translation_may_change_words_but_not_code() -> None:
    assert i18n.same_code('print("the model was sent:", x)  # look', 'print("发给模型的内容：", x)  # 看')
    assert i18n.same_code('print(f"{n} steps in {k} rounds")', 'print(f"{k} 轮中共 {n} 步")')
    assert not i18n.same_code('run("x", era="2025-11-25")', 'run("x", era="2025-03-26")')
    assert not i18n.same_code('print(f"{n} steps so far")', 'print(f"{m} 步")')


@pytest.mark.parametrize("path", CHINESE, ids=lambda p: str(p.relative_to(ROOT)))
def test_a_chinese_notebook_shows_no_english_prose(path: Path) -> None:
    chinese = nbformat.read(path, as_version=4)
    english = nbformat.read(ENGLISH[CHINESE.index(path)], as_version=4)
    prose = [
        match.group(0)
        for cell in chinese.cells
        if cell.cell_type == "markdown"
        for match in _ENGLISH_RUN.finditer(_NOT_PROSE.sub(" ", cell.source))
    ]
    assert prose == [], "English left in the markdown"
    shown = _outputs_text(chinese)
    labels = {label for cell in english.cells if cell.cell_type == "code" for label in _printed_labels(cell.source)}
    untranslated = sorted(
        [msgid for msgid, pattern in _labkit_sentences().items() if pattern.search(shown)]
        + [label for label in labels if label in shown]
    )
    assert untranslated == [], "English learner-facing sentences in the outputs"


@pytest.mark.parametrize("path", CHINESE, ids=lambda p: str(p.relative_to(ROOT)))
def test_a_chinese_notebook_is_committed_executed_and_small(path: Path) -> None:
    notebook = nbformat.read(path, as_version=4)
    code = [c for c in notebook.cells if c.cell_type == "code" and "nbval-skip" not in c.metadata.get("tags", [])]
    assert all(c.execution_count is not None for c in code), "execute it with tools/notebooks.py"
    assert notebook.metadata.get("language") == i18n.FOLDER
    assert path.stat().st_size < 400 * 1024


def test_lines_wrapped_inside_chinese_text_are_joined_and_nothing_else() -> None:
    assert i18n._unwrap("模型只提议，\n**主机**决定") == "模型只提议，**主机**决定"
    assert i18n._unwrap("主机\n决定") == "主机决定"
    assert i18n._unwrap("调用 MCP\n服务端") == "调用 MCP\n服务端", "a break after Latin text is a space anyway"
    assert i18n._unwrap("步骤：\n- 第一步\n- 第二步") == "步骤：\n- 第一步\n- 第二步", "list items stay lines"
    assert i18n._unwrap("```\n# 注释，\n代码\n```") == "```\n# 注释，\n代码\n```", "code blocks stay as written"
