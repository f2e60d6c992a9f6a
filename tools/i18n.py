"""The lab in two languages from one source: gettext catalogs for labkit, the notebooks and the README.

    python tools/i18n.py extract   # templates (.pot) from the English sources; merge them into the .po files
    python tools/i18n.py compile   # labkit's .po -> .mo (what labkit reads at run time)
    python tools/i18n.py build     # zh-CN/{notebooks,solutions}/ and README.zh-CN.md from English sources + catalogs
    python tools/i18n.py check     # exit 1 if any message is untranslated or fuzzy, or a generated file is stale

The English notebooks are the source. A markdown cell is one message; a code cell is one message when it
has a comment or a sentence in a string (its translation may change only those: the code stays the same
code, which `check` proves on the syntax tree). Generated notebooks keep the English cells' ids and
metadata and are executed like the English ones (`tools/notebooks.py`); nobody edits them by hand.
"""

from __future__ import annotations

import ast
import io
import os
import re
import sys
import tokenize
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import nbformat
from babel.messages.catalog import Catalog
from babel.messages.extract import extract_from_dir
from babel.messages.mofile import write_mo
from babel.messages.pofile import read_po, write_po

ROOT = Path(__file__).resolve().parent.parent
NOTEBOOKS, SOLUTIONS = ROOT / "notebooks", ROOT / "solutions"
LOCALE = ROOT / "locale"
LABKIT_LOCALE = ROOT / "labkit" / "locale"
LANGUAGE, FOLDER = "zh_CN", "zh-CN"
# Fixed dates keep the catalogs' bytes stable from run to run (only real changes show in a diff).
_EPOCH = datetime(2026, 12, 1, tzinfo=UTC)
_SENTENCE = re.compile(r"[A-Za-z]{2,}[^\w]+[A-Za-z]{2,}")
_IDEOGRAPH = re.compile(r"[\u4e00-\u9fff]")
_CJK_PUNCTUATION = re.compile(r"[\u3000-\u303f\uff00-\uffef\u2014\u2026\u201c\u201d\u2018\u2019]")
_CJK = re.compile(f"{_IDEOGRAPH.pattern}|{_CJK_PUNCTUATION.pattern}")


def english_notebooks() -> list[Path]:
    return sorted(NOTEBOOKS.glob("[0-9]*.ipynb")) + sorted(SOLUTIONS.glob("[0-9]*.ipynb"))


def generated(source: Path) -> Path:
    return ROOT / FOLDER / source.relative_to(ROOT)


def _has_prose(code: str) -> bool:
    try:
        tokens = list(tokenize.generate_tokens(io.StringIO(code).readline))
    except (tokenize.TokenError, SyntaxError):
        return False
    return any(t.type == tokenize.COMMENT or (t.type == tokenize.STRING and _SENTENCE.search(t.string)) for t in tokens)


def messages_of(path: Path) -> list[tuple[str, int]]:
    """The translatable cells of one notebook: (source, cell index from 0)."""
    notebook = nbformat.read(path, as_version=4)
    return [
        (cell.source, index)
        for index, cell in enumerate(notebook.cells)
        if cell.source.strip()
        and (cell.cell_type == "markdown" or (cell.cell_type == "code" and _has_prose(cell.source)))
    ]


def _catalog(domain: str | None) -> Catalog:
    return Catalog(
        domain=domain,
        project="mcp-teaching-lab",
        creation_date=_EPOCH,
        revision_date=_EPOCH,
        fuzzy=False,
        charset="utf-8",
    )


def _write(catalog: Catalog, path: Path) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    buffer = io.BytesIO()
    # No previous msgid: babel writes one that spans lines in a form its own reader takes back as translator
    # comments, which then piled up at each extract. A fuzzy entry keeps its old translation beside the new text.
    write_po(buffer, catalog, width=0, include_previous=False)
    path.write_bytes(buffer.getvalue())


def _read(path: Path, locale: str | None = LANGUAGE) -> Catalog:
    with path.open("rb") as handle:
        return read_po(handle, locale=locale)


def _templates() -> dict[Path, Catalog]:
    """Each catalog's template, keyed by the .po it merges into."""
    templates: dict[Path, Catalog] = {}
    labkit = _catalog("labkit")
    for folder in ("labkit", "servers"):  # the lab's servers speak the learner's language too (a chart's labels)
        for filename, lineno, message, comments, context in extract_from_dir(
            ROOT / folder, method_map=[("**.py", "python")], comment_tags=("i18n:",)
        ):
            labkit.add(message, locations=[(f"{folder}/{filename}", lineno)], auto_comments=comments, context=context)
    templates[LABKIT_LOCALE / LANGUAGE / "LC_MESSAGES" / "labkit.po"] = labkit
    by_stem: dict[str, Catalog] = {}
    for path in english_notebooks():
        catalog = by_stem.setdefault(path.stem, _catalog(path.stem))
        for source, index in messages_of(path):
            catalog.add(source, locations=[(str(path.relative_to(ROOT)), index + 1)])
    for stem, catalog in by_stem.items():
        templates[LOCALE / LANGUAGE / f"{stem}.po"] = catalog
    readme = _catalog("README")
    for source, index in _readme_blocks():
        readme.add(source, locations=[("README.md", index + 1)])
    templates[LOCALE / LANGUAGE / "README.po"] = readme
    return templates


def _readme_blocks() -> list[tuple[str, int]]:
    """The README as blocks separated by blank lines, a fenced code block kept whole."""
    blocks: list[str] = []
    current: list[str] = []
    fenced = False
    for line in (ROOT / "README.md").read_text(encoding="utf-8").splitlines():
        if line.startswith("```"):
            fenced = not fenced
        if not line.strip() and not fenced:
            if current:
                blocks.append("\n".join(current))
            current = []
        else:
            current.append(line)
    if current:
        blocks.append("\n".join(current))
    return [(block, index) for index, block in enumerate(blocks)]


def extract() -> None:
    for po_path, template in _templates().items():
        labkit = po_path.parent.name == "LC_MESSAGES"
        pot_path = LABKIT_LOCALE / "labkit.pot" if labkit else LOCALE / "templates" / f"{po_path.stem}.pot"
        _write(template, pot_path)
        catalog = _read(po_path) if po_path.exists() else _catalog(template.domain)
        catalog.locale = LANGUAGE
        catalog.update(template, update_creation_date=False)
        catalog.creation_date = catalog.revision_date = _EPOCH
        _write(catalog, po_path)
        print(f"{po_path.relative_to(ROOT)}: {len(template)} messages, {len(_missing(catalog))} to translate")


def _missing(catalog: Catalog) -> list[Any]:
    return [m.id for m in catalog if m.id and (not m.string or m.fuzzy)]


def _labkit_mo() -> tuple[Path, bytes]:
    """Where labkit's compiled catalog lives, and the bytes its .po compiles to now."""
    po_path = LABKIT_LOCALE / LANGUAGE / "LC_MESSAGES" / "labkit.po"
    buffer = io.BytesIO()
    write_mo(buffer, _read(po_path), use_fuzzy=False)
    return po_path.with_suffix(".mo"), buffer.getvalue()


def compile_mo() -> None:
    mo_path, compiled = _labkit_mo()
    mo_path.write_bytes(compiled)


_BLOCK_START = re.compile(r"\s*([-*+]\s|[>|#]|\d+\.\s|</?\w|```)")


def _unwrap(markdown: str) -> str:
    """Join a line wrapped inside Chinese text to the next (a newline there would render as a stray space)."""
    lines = markdown.split("\n")
    joined, fenced = [lines[0]], lines[0].startswith("```")
    for line in lines[1:]:
        previous = joined[-1]
        if (
            not fenced
            and previous.strip()
            and line.strip()
            and not _BLOCK_START.match(line)
            and _joins(previous.rstrip().rstrip("*_")[-1:], line.lstrip().lstrip("*_")[:1])
        ):
            joined[-1] = previous.rstrip() + line.lstrip()
        else:
            joined.append(line)
        fenced ^= line.lstrip().startswith("```")
    return "\n".join(joined)


def _joins(last: str, first: str) -> bool:
    """No space belongs after Chinese punctuation, nor between two Chinese characters."""
    return bool(_CJK_PUNCTUATION.match(last) or (_IDEOGRAPH.match(last) and _CJK.match(first)))


def translated_notebook(source: Path) -> nbformat.NotebookNode:
    """The Chinese notebook's cells from the English one and its catalog (outputs are the executor's)."""
    catalog = _read(LOCALE / LANGUAGE / f"{source.stem}.po")
    notebook = nbformat.read(source, as_version=4)
    for cell in notebook.cells:
        message = catalog.get(cell.source)
        if message is not None and message.string and not message.fuzzy:
            cell.source = _unwrap(str(message.string)) if cell.cell_type == "markdown" else message.string
    notebook.metadata["language"] = FOLDER
    return notebook


def _is_prose(text: str) -> bool:
    return bool(_SENTENCE.search(text) or _CJK.search(text))


class _Sentences(ast.NodeTransformer):
    """Replace every sentence by a marker; an f-string keeps only its placeholders (a translation may reorder them).

    A string handed straight to `print` is a label whatever its length (`"model:"`), so it may change too."""

    def visit_Call(self, node: ast.Call) -> ast.AST:
        if isinstance(node.func, ast.Name) and node.func.id == "print":
            node.args = [self._label(argument) for argument in node.args]
        return self.generic_visit(node)

    def _label(self, node: ast.expr) -> ast.expr:
        if isinstance(node, ast.Constant) and isinstance(node.value, str):
            return ast.Constant("<sentence>")
        if isinstance(node, ast.JoinedStr):
            return self._holes(node)
        return node

    def visit_Constant(self, node: ast.Constant) -> ast.AST:
        prose = isinstance(node.value, str) and _is_prose(node.value) and not node.value.startswith("<sentence>")
        return ast.Constant("<sentence>") if prose else node

    def visit_JoinedStr(self, node: ast.JoinedStr) -> ast.AST:
        texts = [part.value for part in node.values if isinstance(part, ast.Constant) and isinstance(part.value, str)]
        return self._holes(node) if any(_is_prose(text) for text in texts) else self.generic_visit(node)

    @staticmethod
    def _holes(node: ast.JoinedStr) -> ast.Constant:
        holes = sorted(ast.dump(part) for part in node.values if isinstance(part, ast.FormattedValue))
        return ast.Constant("<sentence>" + "|".join(holes))


def same_code(english: str, chinese: str) -> bool:
    """True when two code cells differ only in comments and in the sentences of their strings."""

    def shape(code: str) -> str:
        lines = [line for line in code.splitlines() if not line.lstrip().startswith(("%", "!"))]
        return ast.dump(_Sentences().visit(ast.parse("\n".join(lines))))

    try:
        return shape(english) == shape(chinese)
    except SyntaxError:
        return False


def _code(notebook: nbformat.NotebookNode) -> list[tuple[str, str]]:
    """Each cell's kind, with a code cell's source: what a notebook's outputs depend on."""
    return [(cell.cell_type, cell.source if cell.cell_type == "code" else "") for cell in notebook.cells]


def keep_outputs(previous: nbformat.NotebookNode, notebook: nbformat.NotebookNode) -> bool:
    """Give `notebook` the outputs `previous` was executed with when only their prose differs (the same code in the
    same cells made them); False, and `notebook` untouched, when any code differs."""
    if _code(previous) != _code(notebook):
        return False
    for old, new in zip(previous.cells, notebook.cells, strict=True):
        if new.cell_type == "code":
            new.outputs, new.execution_count, new.metadata = old.outputs, old.execution_count, old.metadata
        if "id" in old:
            new.id = old.id
    notebook.metadata = previous.metadata
    return True


def build() -> None:
    for source in english_notebooks():
        target = generated(source)
        notebook = translated_notebook(source)
        if target.exists():  # keep the outputs of the last execution; the executor refreshes them
            previous = nbformat.read(target, as_version=4)
            if [c.source for c in previous.cells] == [c.source for c in notebook.cells]:
                continue
            if keep_outputs(previous, notebook):
                nbformat.write(notebook, target)
                print(f"wrote {target.relative_to(ROOT)} (its prose; the code and outputs are as executed)")
                continue
        target.parent.mkdir(parents=True, exist_ok=True)
        nbformat.write(notebook, target)
        print(f"wrote {target.relative_to(ROOT)} (execute it with tools/notebooks.py)")
    readme = _read(LOCALE / LANGUAGE / "README.po")
    blocks = []
    for block, _index in _readme_blocks():
        message = readme.get(block)
        blocks.append(
            _unwrap(str(message.string)) if message is not None and message.string and not message.fuzzy else block
        )
    glossary = (LOCALE / LANGUAGE / "glossary.md").read_text(encoding="utf-8")
    (ROOT / "README.zh-CN.md").write_text("\n\n".join(blocks) + "\n\n" + glossary, encoding="utf-8")


def problems() -> list[str]:
    """Everything that keeps the Chinese edition from matching its English source (empty when complete)."""
    found = []
    for po_path, template in _templates().items():
        catalog = _read(po_path) if po_path.exists() else _catalog(template.domain)
        for message in template:
            if not message.id:
                continue
            translation = catalog.get(message.id, context=message.context)
            if translation is None or not translation.string:
                found.append(f"{_name(po_path)}: no translation for {_short(message.id)}")
            elif translation.fuzzy:
                found.append(f"{_name(po_path)}: fuzzy translation of {_short(message.id)}")
    for source in english_notebooks():
        target = generated(source)
        if not target.exists():
            found.append(f"{_name(target)}: missing (run tools/i18n.py build)")
            continue
        expected, actual = translated_notebook(source), nbformat.read(target, as_version=4)
        if [c.source for c in expected.cells] != [c.source for c in actual.cells]:
            found.append(f"{_name(target)}: stale against {_name(source)} (run tools/i18n.py build)")
        for english, chinese in zip(nbformat.read(source, as_version=4).cells, expected.cells, strict=False):
            if english.cell_type == "code" and not same_code(english.source, chinese.source):
                found.append(f"{_name(target)}: a translation changes code, not only words: {_short(english.source)}")
    mo_path, compiled = _labkit_mo()
    if not mo_path.exists() or mo_path.read_bytes() != compiled:
        found.append(f"{_name(mo_path)}: stale (run tools/i18n.py compile)")
    return found


def _name(path: Path) -> str:
    return os.path.relpath(path, ROOT)


def _short(message_id: str | tuple[str, ...] | list[str]) -> str:
    text = message_id if isinstance(message_id, str) else message_id[0]  # a plural message: its singular
    first = text.strip().splitlines()[0]
    return repr(first[:70] + ("…" if len(first) > 70 or "\n" in text.strip() else ""))


def main(argv: list[str]) -> int:
    commands = {"extract": extract, "compile": compile_mo, "build": build}
    if argv[:1] == ["check"]:
        found = problems()
        print("\n".join(found) or "the Chinese edition is complete and up to date")
        return 1 if found else 0
    if len(argv) != 1 or argv[0] not in commands:
        print(f"usage: python tools/i18n.py {{{'|'.join([*commands, 'check'])}}}", file=sys.stderr)
        return 2
    commands[argv[0]]()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
