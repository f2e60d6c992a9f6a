"""The Chinese edition of the notebooks: complete, generated from the English source, and showing no English prose."""

from __future__ import annotations

import ast
import html
import importlib.util
import re
import shutil
import sys
from pathlib import Path
from typing import Any

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
                # One line, and whole words at the end: " did not answer within {seconds} s" is not in the log
                # store's "payment-service did not answer within 3000 ms" (business data, kept as it is).
                end = r"(?![A-Za-z])" if re.search(r"[A-Za-z]$", parts[-1]) else ""
                patterns[msgid] = re.compile(r"[^\n]{1,200}?".join(re.escape(part) for part in parts) + end)
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
    # What may stay English (the rule the sentence check below applies) and a table's field names are not counted.
    names = _field_names([output for cell in chinese.cells for output in cell.get("outputs", [])])
    shown = "\n".join(
        _without(names, line)
        for line in _outputs_text(chinese).splitlines()
        if not any(reason.search(line) for reason in _MAY_STAY_ENGLISH)
    )
    labels = {label for cell in english.cells if cell.cell_type == "code" for label in _printed_labels(cell.source)}
    untranslated = sorted(
        [msgid for msgid, pattern in _labkit_sentences().items() if pattern.search(shown)]
        # A whole label, not the start of a longer word ("tools of" is no label inside "tools offered").
        + [label for label in labels if re.search(rf"(?<!\w){re.escape(label)}(?!\w)", shown)]
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


def test_a_rebuild_keeps_the_outputs_only_when_just_the_prose_changed() -> None:
    def notebook(markdown: str, code: str) -> nbformat.NotebookNode:
        return nbformat.v4.new_notebook(
            cells=[nbformat.v4.new_markdown_cell(markdown), nbformat.v4.new_code_cell(code)], metadata={}
        )

    executed = notebook("# 标题", "print(1)")
    executed.cells[1].outputs = [nbformat.v4.new_output("stream", text="1\n")]
    executed.cells[1].execution_count = 1
    reworded = notebook("# 新标题", "print(1)")
    assert i18n.keep_outputs(executed, reworded)
    assert reworded.cells[1].outputs == executed.cells[1].outputs and reworded.cells[0].source == "# 新标题"
    recoded = notebook("# 标题", "print(2)")
    assert not i18n.keep_outputs(executed, recoded)
    assert recoded.cells[1].outputs == []


# An English sentence in an output, whatever printed it (labkit, a server, a business system, the simulated model):
# four words or more, one space apart (a table's header row puts two or more spaces between its column names).
_ENGLISH_SENTENCE = re.compile(r"\b[A-Za-z][a-z]+(?:[,;:]? [A-Za-z][a-z]+\b[.?!]?){3,}")
_CHINESE_WORDS = re.compile(r"[\u4e00-\u9fff]{2,}")
# What may stay English, and why (the glossary's last paragraph says the same to the learner):
_MAY_STAY_ENGLISH = (
    # text the simulated model reads in English: the lab's servers' results (00, 03, 04), the weekly report prompt
    # and the order policy. In 07 the attacks' tasks, the planted order and the payloads are Chinese; what stays
    # English there is the order hidden in Unicode tag characters (they spell ASCII only; the model's notes quote
    # it) and exercise 1's two held-out descriptions in the style of real servers.
    re.compile(
        r"description|[Bb]efore using this|Do not mention|Saved the order-service|Already saved|"
        r"Write the weekly order report|[Oo]rder policy|orders? (?:above|still|leave)|paid orders|customer may|"
        r"goods may|^summarise_ticket \||^translate \|"
    ),
    # what the host itself tells the model (the untrusted-data note, a refused or failed call): one English text in
    # both editions, its account in the trace in the learner's language (05 §2)
    # (a naive model's answer may quote the note, cut short after its first words)
    re.compile(r"untrusted-data markers|</untrusted-data[^>]*> The text between|The host (?:did not run|stopped)"),
    # a dataclass repr (a list of identifiers in a Chinese line takes 、, `labkit._i18n.listing`: not exempt)
    re.compile(r"^Confinement\("),
    # Mermaid's own syntax in a diagram's source (`participant host as Host`)
    re.compile(r"^\s*(?:participant \w+ as|Note over)"),
    # business data: the log store's error messages, the SQLite rows
    re.compile(r"db pool exhausted|connection (?:refused|reset)|timed out|upstream|payment gateway"),
)


def _field_names(outputs: list[dict[str, Any]]) -> list[str]:
    """The column names of the tables among `outputs`, longest first: field names the learner's code indexes
    (`taxonomy["who sees it"]`), not prose."""
    tables = "".join(str(output.get("data", {}).get("text/html", "")) for output in outputs)
    names = {html.unescape(name).strip() for name in re.findall(r"<th(?:\s[^>]*)?>(.*?)</th>", tables, re.S)}
    return sorted(filter(None, names), key=len, reverse=True)


def _without(names: list[str], line: str) -> str:
    for name in names:  # a whole name: the column `to` is not in "tool"
        line = re.sub(rf"(?<![\w.-]){re.escape(name)}(?![\w.-])", " ", line)
    return line


def english_sentence_lines(notebook: nbformat.NotebookNode) -> tuple[list[str], int]:
    """The output lines holding an English sentence, and how many output lines hold a sentence in either language.

    A table's column names are field names the learner's code indexes, and a docstring (`help()`, `getdoc`) is the
    code's own text: neither counts."""
    english, sentences = [], 0
    for cell in notebook.cells:
        if re.search(r"^help\(|getdoc\(|__doc__", cell.get("source", "").lstrip()):
            continue
        for output in cell.get("outputs", []):
            data = output.get("data", {})
            names = _field_names([output])
            for line in str(output.get("text") or data.get("text/plain") or "").splitlines():
                line = _without(names, line)
                found = _ENGLISH_SENTENCE.search(line)
                sentences += bool(found or _CHINESE_WORDS.search(line))
                if found:
                    english.append(line.strip())
    return english, sentences


def unexplained_english(lines: list[str]) -> list[str]:
    return [line for line in lines if not any(reason.search(line) for reason in _MAY_STAY_ENGLISH)]


# The lessons whose outputs have been made Chinese end to end; 01, 02, 05, 06 and 08 still print English the model
# reads (01's and 06's questions, 02's policy) and English of their own, to be added here as each is done.
_CHINESE_END_TO_END = [path for path in CHINESE if path.name[:2] in ("00", "03", "04", "07")]


@pytest.mark.parametrize("path", _CHINESE_END_TO_END, ids=lambda p: str(p.relative_to(ROOT)))
def test_a_chinese_notebook_prints_no_english_sentence_from_any_source(path: Path) -> None:
    english, _sentences = english_sentence_lines(nbformat.read(path, as_version=4))
    assert unexplained_english(english) == []


def test_the_english_sentence_check_finds_a_server_summary_and_spares_a_table_header() -> None:
    notebook = nbformat.v4.new_notebook(
        cells=[
            nbformat.v4.new_code_cell(
                outputs=[
                    nbformat.v4.new_output(
                        "stream",
                        text="    round  from    to  kind  \\\n14   renders the order-service chart and saves it in "
                        "the personal space\n15   日志库：order-service 共 401 个报错\n",
                    )
                ]
            )
        ]
    )
    english, sentences = english_sentence_lines(notebook)
    assert english == ["14   renders the order-service chart and saves it in the personal space"] and sentences == 2
    assert unexplained_english(english) == english


def test_a_list_of_identifiers_in_a_chinese_line_counts_as_english_unless_it_takes_the_enumeration_comma() -> None:
    """What the 2026-12-04 measure of zh-CN 07 found: rule and defence names joined with a half-width ", "."""
    lines = [
        "扫描器扣下了 untrusted.poisoned/add：concealment, exfiltration, markup, pre-call-directive, secret-path",
        "扫描器扣下了 untrusted.poisoned/add：concealment、exfiltration、markup、pre-call-directive、secret-path",
        "2 次探测调用（logs__query_errors: blocked, not sent, untrusted.docs__search_docs: denied, not sent）",
        "2 次探测调用（logs__query_errors: blocked/not sent、untrusted.docs__search_docs: denied/not sent）",
    ]
    notebook = nbformat.v4.new_notebook(
        cells=[nbformat.v4.new_code_cell(outputs=[nbformat.v4.new_output("stream", text="\n".join(lines))])]
    )
    english, _sentences = english_sentence_lines(notebook)
    assert unexplained_english(english) == [lines[0], lines[2]]


@pytest.mark.parametrize("path", CHINESE + ENGLISH, ids=lambda p: str(p.relative_to(ROOT)))
def test_no_output_shows_a_character_as_an_escape(path: Path) -> None:
    """JSON shown to a learner keeps its characters (`ensure_ascii=False`): `\\u628a` is unreadable."""
    escaped = [
        m.group(0)
        for m in re.finditer(r"\\u([0-9a-fA-F]{4})", _outputs_text(nbformat.read(path, as_version=4)))
        if int(m.group(1), 16) >= 0x80
    ]
    assert escaped == []


def _labels_in_code(code: str) -> list[str]:
    """The strings a code cell names table columns, rows or dict entries with: what its table shows as headings."""
    try:
        tree = ast.parse("\n".join(line for line in code.splitlines() if not line.lstrip().startswith(("%", "!"))))
    except SyntaxError:
        return []
    named: list[ast.expr] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Dict):
            named += [key for key in node.keys if key is not None]
        elif isinstance(node, ast.Subscript) and isinstance(node.ctx, ast.Store):
            named.append(node.slice)
        elif isinstance(node, ast.keyword) and node.arg in ("name", "columns"):
            named += node.value.elts if isinstance(node.value, (ast.List, ast.Tuple)) else [node.value]
    return [n.value for n in named if isinstance(n, ast.Constant) and isinstance(n.value, str)]


def _proper_name(label: str) -> bool:
    """A product's, an API's or a transport's name ("OpenAI Responses", "Streamable HTTP", "MCP inputSchema"): each
    word capitalised or camelCase, a parenthesised remark aside. Not a phrase to translate."""
    words = re.findall(r"[A-Za-z]+", re.sub(r"\([^)]*\)", "", label))
    return bool(words) and all(word[0].isupper() or any(c.isupper() for c in word[1:]) for word in words)


def _keys_the_checks_read() -> set[str]:
    """The strings labkit's exercise checks hold: a key an answer must carry ("protocol error") is a field name."""
    return {
        node.value
        for path in (ROOT / "labkit" / "lessons" / "checks").glob("*.py")
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8")))
        if isinstance(node, ast.Constant) and isinstance(node.value, str)
    }


@pytest.mark.parametrize("path", CHINESE, ids=lambda p: str(p.relative_to(ROOT)))
def test_a_chinese_lessons_own_tables_head_their_columns_in_chinese(path: Path) -> None:
    """A heading the lesson's code writes as a phrase ("how it works", "honest retry") is translated in the lesson's
    catalog like its printed labels; one word (`attack`, `sent`) is a field name and stays, and so does a proper name
    (`Streamable HTTP`) (the glossary says so). Every lesson, since the zh review of 2026-12-04 found 01, 02, 05, 06
    and 08 heading their tables in English."""
    notebook, checked = nbformat.read(path, as_version=4), _keys_the_checks_read()
    english = sorted(
        {
            label
            for cell in notebook.cells
            if cell.cell_type == "code"
            for label in _labels_in_code(cell.source)
            if _is_sentence(label)
            and i18n._is_prose(label)
            and not _CHINESE_WORDS.search(label)
            and not _proper_name(label)
            and label not in checked
        }
    )
    assert english == []
