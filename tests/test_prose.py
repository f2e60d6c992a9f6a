"""Notebook prose held to the repository and to its own run, read from the committed notebooks (nothing is run).

Every repository path and `labkit.` name a lesson names exists; every "§N", "notebook NN" and "NN §M" names a
lesson and a `## N` section that exist; every source article it cites is one notebook 00 lists, by the one name
it gives them; a lesson that says notebook NN asked a person is right only if NN's run shows someone asked; each
claim of `tests/prose_claims.py` is in the prose and shown by its cell's stored output, in English and in Chinese;
and no lesson code decides by comparing with a display label, which the Chinese edition translates (zh-CN 07 once
counted 0/9 attacks where the English counted 9/9).
"""

from __future__ import annotations

import ast
import functools
import importlib
import re
import subprocess
from collections.abc import Iterable
from html.parser import HTMLParser
from pathlib import Path

import nbformat
import pytest
from babel.messages.pofile import read_po

from labkit._i18n import in_language
from labkit.host._waiting import FORM_FALLBACK
from labkit.trace import ACTORS, select
from tests.prose_claims import CLAIMS, Claim

ROOT = Path(__file__).resolve().parent.parent
LESSONS = sorted((ROOT / "notebooks").glob("[0-9][0-9]_*.ipynb"))
ENGLISH = LESSONS + sorted((ROOT / "solutions").glob("[0-9][0-9]_*.ipynb"))
CHINESE = [ROOT / "zh-CN" / path.relative_to(ROOT) for path in ENGLISH]
CATALOG = ROOT / "labkit" / "locale" / "zh_CN" / "LC_MESSAGES" / "labkit.po"

_FOLDERS = (
    ".ci",
    "benchmarks",
    "binder",
    "labkit",
    "locale",
    "notebooks",
    "servers",
    "skills",
    "solutions",
    "tests",
    "tools",
    "zh-CN",
)
_PATH = re.compile(rf"(?<![\w./-])((?:{'|'.join(map(re.escape, _FOLDERS))})/[\w./*<>-]*)")
_FILE = re.compile(r"(?<![\w./<>-])([\w-]+\.(?:py|md|ipynb|json|cfg|toml|txt|sh|yml|yaml))\b")
_PLACEHOLDER = re.compile(r"<[^>]*>|\bNN\b|\*")
_HEADING = re.compile(r"(?m)^## (\d+[a-z]?)\b")
# "notebook 03", "notebooks 03 and 05", "Notebook 00 §4", "notebook 02's", "Notebook 03 (§7)"
_NOTEBOOKS = re.compile(r"\b[Nn]otebooks? (\d\d)((?:(?:,| and| or) \d\d)*)(?:'s)?(?:,? \(?§(\d+[a-z]?))?")
_NN_SECTION = re.compile(r"(?<![\w§])(\d\d) §(\d+[a-z]?)")
_SECTION = re.compile(r"(?<![\w])(?:§|[Ss]ection )(\d+[a-z]?)\b")
_SEED_SECTION = re.compile(r"\b[Aa]rticles? \d{3},? §\d+")
_LABKIT_NAME = re.compile(r"(?<![\w./-])labkit(?:\.[A-Za-z_]\w*)+")
_ARTICLE = re.compile(r"\b[Aa]rticles? (\d{3})\b")
_ARTICLE_ALIAS = re.compile(r"\b(?:[Ss]eeds?\b(?! of)|[Ss]ource articles?\b)")
_LISTED_ARTICLE = re.compile(r"(?m)^- \*\*article (\d{3})\*\*")
_ASKS_A_PERSON = re.compile(
    r"\b(?:asks?|asked|needs)\b[^.]*?\b(?:a person|the user|the user's yes)\b|\bwaits? for an approval\b"
)
_ABOUT_A_CALL = re.compile(r"\b(?:gate|host|approv\w*|yes)\b", re.I)
# What a run prints when a person (or the scripted user standing in for one) was asked about a call.
_A_PERSON_WAS_ASKED = re.compile(r"asks (?:the user )?to approve|approved by the user")


def _read(path: Path) -> nbformat.NotebookNode:
    return nbformat.read(path, as_version=4)


def _markdown(notebook: nbformat.NotebookNode) -> list[str]:
    return [cell.source for cell in notebook.cells if cell.cell_type == "markdown"]


def _output(cell: nbformat.NotebookNode) -> str:
    parts = []
    for output in cell.get("outputs", []):
        parts.append(str(output.get("text", "")))
        data = output.get("data", {})
        parts.extend(str(data.get(kind, "")) for kind in ("text/plain", "text/markdown"))
    return "\n".join(parts)


class _TableBody(HTMLParser):
    """The body rows of the first HTML table in a cell's output: each row's header cell, then its data cells."""

    def __init__(self) -> None:
        super().__init__()
        self.rows: list[list[str]] = []
        self._in_body = self._in_cell = False

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag == "tbody":
            self._in_body = True
        elif self._in_body and tag == "tr":
            self.rows.append([])
        elif self._in_body and tag in ("th", "td"):
            self._in_cell = True
            self.rows[-1].append("")

    def handle_endtag(self, tag: str) -> None:
        if tag == "tbody":
            self._in_body = False
        elif tag in ("th", "td"):
            self._in_cell = False

    def handle_data(self, data: str) -> None:
        if self._in_cell:
            self.rows[-1][-1] += data.strip()


def table_rows(cell: nbformat.NotebookNode) -> list[list[str]]:
    for output in cell.get("outputs", []):
        table = str(output.get("data", {}).get("text/html", ""))
        if "<tbody" in table:
            body = _TableBody()
            body.feed(table)
            return body.rows
    return []


@functools.cache
def _tracked() -> frozenset[str]:
    listed = subprocess.run(["git", "ls-files"], cwd=ROOT, capture_output=True, text=True, check=True).stdout
    return frozenset(listed.splitlines())


@functools.cache
def _sections(path: Path) -> set[str]:
    return {number for source in _markdown(_read(path)) for number in _HEADING.findall(source)}


def _lesson(number: str) -> Path | None:
    return next(iter(sorted((ROOT / "notebooks").glob(f"{number}_*.ipynb"))), None)


def path_problems(notebook: nbformat.NotebookNode, tracked: frozenset[str]) -> list[str]:
    """Repository paths and file names in the prose that name nothing in the repository (nor in the notebook)."""
    names = {Path(file).name for file in tracked}
    code = "\n".join(cell.source for cell in notebook.cells if cell.cell_type == "code")
    found = []
    for source in _markdown(notebook):
        for path in (match.rstrip(".,:;)") for match in _PATH.findall(source)):
            if path.startswith("tools/") and "." not in path:  # tools/list, tools/call: MCP methods
                continue
            pattern = _PLACEHOLDER.sub("*", path.rstrip("/"))
            if not any(file == pattern or file.startswith(pattern + "/") for file in tracked) and not any(
                ROOT.glob(pattern)
            ):
                found.append(path)
        found += [name for name in _FILE.findall(source) if name not in names and name not in code]
    return found


def labkit_name_problems(notebook: nbformat.NotebookNode) -> list[str]:
    """`labkit.x.y` names in the prose that do not resolve to a module or an attribute of one."""
    found = []
    for source in _markdown(notebook):
        for name in dict.fromkeys(_LABKIT_NAME.findall(source)):
            parts = name.split(".")
            module, depth = None, len(parts)
            while module is None and depth:
                try:
                    module = importlib.import_module(".".join(parts[:depth]))
                except ModuleNotFoundError:
                    depth -= 1
            target: object = module
            for attribute in parts[depth:]:
                target = getattr(target, attribute, None)
            if target is None:
                found.append(name)
    return found


@functools.cache
def listed_articles() -> frozenset[str]:
    """The source articles notebook 00 lists ("- **article 003** · ..."): the only ones a lesson may cite."""
    start = _lesson("00")
    assert start is not None
    return frozenset(number for source in _markdown(_read(start)) for number in _LISTED_ARTICLE.findall(source))


def article_problems(notebook: nbformat.NotebookNode) -> list[str]:
    """Source articles cited by a name notebook 00 does not give them ("seed 002") or by a number it does not list."""
    found = []
    for source in _markdown(notebook):
        found += [f"{alias!r} (say 'article NNN')" for alias in _ARTICLE_ALIAS.findall(source)]
        found += [f"article {number}" for number in _ARTICLE.findall(source) if number not in listed_articles()]
    return found


@functools.cache
def _stored_outputs(number: str) -> str:
    lesson = _lesson(number)
    return "" if lesson is None else "\n".join(_output(cell) for cell in _read(lesson).cells)


def approval_problems(notebook: nbformat.NotebookNode) -> list[str]:
    """Sentences saying notebook NN's host asks a person about a call, where NN's stored run asked nobody."""
    found = []
    for source in _markdown(notebook):
        for sentence in re.split(r"(?<=[.:;])\s+", " ".join(source.split())):
            # A sentence that names the host's approval policy says who approved instead of a person.
            if not (_ASKS_A_PERSON.search(sentence) and _ABOUT_A_CALL.search(sentence)) or "policy" in sentence:
                continue
            for first, _more, _section in _NOTEBOOKS.findall(sentence):
                if not _A_PERSON_WAS_ASKED.search(_stored_outputs(first)):
                    found.append(f"notebook {first} asked nobody: {sentence[:160]!r}")
    return found


def reference_problems(path: Path) -> list[str]:
    """Cross-references to lessons or sections that do not exist."""
    own = _sections(path)
    found = []
    for source in _markdown(_read(path)):
        text = _SEED_SECTION.sub(" ", source)
        for first, more, section in _NOTEBOOKS.findall(text):
            for number in [first, *re.findall(r"\d\d", more)]:
                lesson = _lesson(number)
                if lesson is None:
                    found.append(f"notebook {number}")
                elif section and number == first and section not in _sections(lesson):
                    found.append(f"notebook {number} §{section}")
        text = _NOTEBOOKS.sub(" ", text)
        for number, section in _NN_SECTION.findall(text):
            lesson = _lesson(number)
            if lesson is None or section not in _sections(lesson):
                found.append(f"{number} §{section}")
        text = _NN_SECTION.sub(" ", text)
        found += [f"§{section}" for section in _SECTION.findall(text) if section not in own]
    return found


def claim_problems(
    claim: Claim, english: nbformat.NotebookNode, shown: nbformat.NotebookNode, *, prose: bool = True
) -> list[str]:
    """What keeps `claim` from being true of `english`'s prose and of `shown`'s stored outputs (the same cells,
    in `english` or its Chinese edition)."""
    found = []
    if prose and not any(claim.says in " ".join(source.split()) for source in _markdown(english)):
        found.append(f"the prose no longer says {claim.says!r}: is the claim still made, and true?")
    cells = [
        index for index, cell in enumerate(english.cells) if cell.cell_type == "code" and claim.shown_by in cell.source
    ]
    if len(cells) != 1:
        return [*found, f"{len(cells)} code cells contain {claim.shown_by!r}, not one"]
    output = _output(shown.cells[cells[0]])
    if claim.shows and not re.search(claim.shows, output, re.S):
        found.append(f"{claim.says!r}, but cell {cells[0]} shows no {claim.shows!r}: {output[:300]!r}")
    if claim.never and re.search(claim.never, output, re.S):
        found.append(f"{claim.says!r}, but cell {cells[0]} shows {claim.never!r}: {output[:300]!r}")
    if claim.holds is not None:
        rows = table_rows(shown.cells[cells[0]])
        try:
            held = bool(rows) and claim.holds(rows)
        except (IndexError, ValueError) as error:
            held, rows = False, [*rows, [f"({type(error).__name__}: {error})"]]
        if not held:
            found.append(f"{claim.says!r}, but the table of cell {cells[0]} does not bear it out: {rows}")
    return found


def _editions(number: str) -> Iterable[tuple[Path, Path]]:
    for english, chinese in zip(ENGLISH, CHINESE, strict=True):
        if english.name.startswith(f"{number}_"):
            yield english, english
            yield english, chinese


@functools.cache
def _display_labels() -> frozenset[str]:
    """labkit's messages that a table or a decision could meet as a value: the ones the Chinese edition changes."""
    with CATALOG.open("rb") as handle:
        catalog = read_po(handle)
    translated = {m.id for m in catalog if isinstance(m.id, str) and m.id and m.string and m.string != m.id}
    # An actor's name is an event's structured field (`step.actor == "model"`) in both languages, even where a table
    # of another notebook shows the same word translated.
    return frozenset(translated - set(ACTORS))


_TEXT_SURGERY = ("startswith", "endswith", "removeprefix", "removesuffix", "split", "rsplit", "partition", "replace")


def _fixed_parts(labels: frozenset[str]) -> frozenset[str]:
    """The literal text of each label around its `{placeholders}` ("shows the model's question: "): what code that
    cuts a value out of a message would name."""
    return frozenset(part for label in labels for part in re.split(r"\{[^{}]*\}", label) if len(part.strip()) >= 8)


def label_comparisons(code: str, labels: frozenset[str]) -> list[str]:
    """Comparisons (==, !=, in) with a translated display label, and text cut out of one (startswith, removeprefix,
    split…) by a label's fixed words, in `code`."""
    try:
        tree = ast.parse("\n".join(line for line in code.splitlines() if not line.lstrip().startswith(("%", "!"))))
    except SyntaxError:
        return []
    found = []
    parts = _fixed_parts(labels)
    for node in ast.walk(tree):
        operands: list[ast.expr] = []
        if isinstance(node, ast.Compare):
            operands = [node.left, *node.comparators]
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr in _TEXT_SURGERY:
            operands = list(node.args)
        for operand in operands:
            elements = operand.elts if isinstance(operand, (ast.Tuple, ast.List, ast.Set)) else [operand]
            found += [e.value for e in elements if isinstance(e, ast.Constant) and e.value in labels | parts]
    return found


@pytest.mark.parametrize("path", ENGLISH + CHINESE, ids=lambda p: str(p.relative_to(ROOT)))
def test_every_path_a_lesson_names_exists(path: Path) -> None:
    assert path_problems(_read(path), _tracked()) == []


@pytest.mark.parametrize("path", ENGLISH, ids=lambda p: str(p.relative_to(ROOT)))
def test_every_lesson_and_section_a_lesson_refers_to_exists(path: Path) -> None:
    assert reference_problems(path) == []


@pytest.mark.parametrize("path", ENGLISH, ids=lambda p: str(p.relative_to(ROOT)))
def test_every_labkit_name_a_lesson_gives_exists(path: Path) -> None:
    assert labkit_name_problems(_read(path)) == []


@pytest.mark.parametrize("path", ENGLISH, ids=lambda p: str(p.relative_to(ROOT)))
def test_every_article_a_lesson_cites_is_listed_in_notebook_00(path: Path) -> None:
    assert article_problems(_read(path)) == []


@pytest.mark.parametrize("path", ENGLISH, ids=lambda p: str(p.relative_to(ROOT)))
def test_a_lesson_says_a_person_was_asked_only_where_the_run_asked_one(path: Path) -> None:
    assert approval_problems(_read(path)) == []


@pytest.mark.parametrize(
    "english,chinese", list(zip(ENGLISH, CHINESE, strict=True)), ids=lambda p: str(p.relative_to(ROOT))
)
def test_the_chinese_prose_cites_the_same_articles(english: Path, chinese: Path) -> None:
    def cited(path: Path, pattern: str) -> list[list[str]]:
        return [sorted(re.findall(pattern, source)) for source in _markdown(_read(path))]

    assert cited(chinese, r"原文 ?(\d{3})") == cited(english, r"\b[Aa]rticles? (\d{3})\b")


def test_the_name_article_and_approval_checks_find_what_the_2026_12_04_review_found() -> None:
    notebook = nbformat.v4.new_notebook(
        cells=[
            nbformat.v4.new_markdown_cell(
                "`labkit.taxonomy.failure_table` reads each trace; `labkit.launch` passes an allow-list; "
                "`labkit.failure_table` and `labkit.host.Host` exist. Seed 002 describes SSE; so does source "
                "article 001, and article 007; article 004 is listed. `render_error_trend` writes a file, so the "
                "gate of notebook 03 needs the user's yes. Notebook 07's gate asks a person. Notebook 04's "
                "server asks the user something."
            ),
        ]
    )
    assert labkit_name_problems(notebook) == ["labkit.taxonomy.failure_table", "labkit.launch"]
    assert article_problems(notebook) == [
        "'Seed' (say 'article NNN')",
        "'source article' (say 'article NNN')",
        "article 007",
    ]
    assert [problem.split(":")[0] for problem in approval_problems(notebook)] == ["notebook 03 asked nobody"]


@pytest.mark.parametrize(
    "english,chinese", list(zip(ENGLISH, CHINESE, strict=True)), ids=lambda p: str(p.relative_to(ROOT))
)
def test_the_chinese_prose_refers_to_the_same_sections(english: Path, chinese: Path) -> None:
    def references(path: Path) -> list[list[str]]:
        return [sorted(re.findall(r"§\d+[a-z]?|\b\d\d\b(?= ?§)", source)) for source in _markdown(_read(path))]

    assert references(chinese) == references(english)


@pytest.mark.parametrize("claim", CLAIMS, ids=lambda c: f"{c.notebook}:{c.says[:40]}")
def test_each_claim_is_in_the_prose_and_shown_by_the_stored_outputs_in_both_languages(claim: Claim) -> None:
    editions = list(_editions(claim.notebook))
    assert editions, f"no notebook {claim.notebook}"
    found = {
        str(shown.relative_to(ROOT)): claim_problems(claim, _read(english), _read(shown), prose=english == shown)
        for english, shown in editions
    }
    assert {path: problems for path, problems in found.items() if problems} == {}


def test_a_claim_fails_when_the_output_no_longer_shows_it() -> None:
    claim = next(c for c in CLAIMS if "planted attacks" in c.says)
    english = _read(next(path for path in LESSONS if path.name.startswith("07_")))
    index = next(i for i, cell in enumerate(english.cells) if claim.shown_by in cell.source)
    assert claim_problems(claim, english, english) == []
    zh_cn_07_on_2026_12_03 = "{'succeeded with no defences': '0/9', 'blocked with all defences': '0/9'}"
    english.cells[index].outputs[0]["data"]["text/plain"] = zh_cn_07_on_2026_12_03
    assert len(claim_problems(claim, english, english)) == 2, "the zh-CN 07 output of 2026-12-03 must fail"


def test_the_limit_claim_fails_when_a_limit_above_the_schema_was_applied() -> None:
    claim = next(c for c in CLAIMS if "clamps" in c.says)
    english = _read(next(path for path in LESSONS if path.name.startswith("02_")))
    cell = english.cells[next(i for i, cell in enumerate(english.cells) if claim.shown_by in cell.source)]
    assert claim_problems(claim, english, english) == []
    table = cell.outputs[0]["data"]["text/plain"]
    cell.outputs[0]["data"]["text/plain"] = re.sub(r"(?m)\d+(\s+\d+\s*)$", r"72\1", table, count=1)
    assert claim_problems(claim, english, english) != [], "a server that applied limit 72 breaks the claim"


def test_the_path_and_reference_checks_find_what_does_not_exist(tmp_path: Path) -> None:
    notebook = nbformat.v4.new_notebook(
        cells=[
            nbformat.v4.new_markdown_cell(
                "## 1 One\n\nSee `labkit/forms.py`, `servers/logs.py` and notebook 02 §11; "
                "§1 and §2 below; notebook 42; servers/*.py; tools/list is a method."
            ),
        ]
    )
    assert path_problems(notebook, _tracked()) == ["labkit/forms.py"]
    path = tmp_path / "notebooks" / "99_demo.ipynb"
    path.parent.mkdir()
    nbformat.write(notebook, path)
    assert reference_problems(path) == ["notebook 02 §11", "notebook 42", "§2"]


@pytest.mark.parametrize("path", ENGLISH, ids=lambda p: str(p.relative_to(ROOT)))
def test_lesson_code_decides_on_fields_not_on_display_labels(path: Path) -> None:
    """A value a lesson reads from labkit's tables is in the learner's language; a key labkit keeps is not."""
    labels = _display_labels()
    code = [cell.source for cell in _read(path).cells if cell.cell_type == "code"]
    assert [label for source in code for label in label_comparisons(source, labels)] == []


def test_the_label_check_finds_the_comparison_zh_cn_07_made() -> None:
    code = (
        'succeeded = every[every["defences"] == "no defences"]["attack succeeded"]\n'
        'notes = [n for n in notes if n.startswith(("all defences", "x"))]'
    )
    assert label_comparisons(code, _display_labels()) == ["no defences", "all defences"]


def test_the_label_check_finds_text_cut_out_of_a_message_by_its_fixed_words() -> None:
    """zh-CN 06 cut the model's question out of a host.relay summary by its English words: nothing was cut."""
    code = 'asked = [e.summary.removeprefix("shows the model\'s question: ") for e in events]'
    assert label_comparisons(code, _display_labels()) == ["shows the model's question: "]


def _headings(path: Path) -> dict[str, str]:
    return {
        m.group(1): m.group(2).replace("`", "").strip()
        for source in _markdown(_read(path))
        for m in re.finditer(r"(?m)^## (\d+[a-z]?) (.+)$", source)
    }


def _cited(text: str) -> list[tuple[str, str]]:
    """The sections a check message cites: ("3", "How to read a trace") from "§3 How to read a trace (filters)"."""
    parts = re.split(r",? and (?=§)|, (?=§)|、(?=§)| 与 (?=§)|，(?=§)", text.replace("`", ""))
    return [
        (m.group(1), re.sub(r"\s*[（(][^（(]*[）)]$", "", m.group(2)).strip())
        for part in parts
        if (m := re.match(r"§(\d+[a-z]?) (.+)", part.strip()))
    ]


def cited_section_problems() -> list[str]:
    """Section titles cited by the exercise checks that are not the headings of their notebook, in each language."""
    with CATALOG.open("rb") as handle:
        catalog = read_po(handle)
    found = []
    for checks in sorted((ROOT / "labkit" / "lessons" / "checks").glob("nb[0-9][0-9].py")):
        number = checks.stem[2:]
        english = _lesson(number)
        assert english is not None, f"{checks.name} checks a lesson that does not exist"
        headings = {"en": _headings(english), "zh_CN": _headings(ROOT / "zh-CN" / english.relative_to(ROOT))}
        for citation in re.findall(r'N_\(\s*"(§[^"]+)"\s*\)', checks.read_text(encoding="utf-8")):
            message = catalog.get(citation)
            translated = message.string if message is not None and isinstance(message.string, str) else ""
            for language, text in (("en", citation), ("zh_CN", translated)):
                for section, title in _cited(text):
                    heading = headings[language].get(section, "")
                    if not heading.startswith(title):
                        found.append(
                            f"{checks.name} ({language}) cites §{section} {title!r}; the heading is {heading!r}"
                        )
    return found


def test_the_checks_cite_the_headings_of_their_lesson_in_each_language() -> None:
    assert cited_section_problems() == []


def kind_filter_problems(notebook: nbformat.NotebookNode) -> list[str]:
    """`kinds=[...]` filters in a lesson's code with a prefix no event kind starts with: a row the prose promises
    (08: "the call went through the host's gate") silently missing from the table."""
    found = []
    for cell in notebook.cells:
        if cell.cell_type != "code":
            continue
        try:
            tree = ast.parse(
                "\n".join(line for line in cell.source.splitlines() if not line.lstrip().startswith(("%", "!")))
            )
        except SyntaxError:
            continue
        for node in ast.walk(tree):
            if isinstance(node, ast.keyword) and node.arg == "kinds" and isinstance(node.value, (ast.List, ast.Tuple)):
                for element in node.value.elts:
                    if isinstance(element, ast.Constant) and isinstance(element.value, str):
                        try:
                            select([], kinds=[element.value])
                        except ValueError as error:
                            found.append(str(error))
    return found


@pytest.mark.parametrize("path", ENGLISH, ids=lambda p: str(p.relative_to(ROOT)))
def test_every_kind_a_lesson_filters_on_is_a_kind(path: Path) -> None:
    assert kind_filter_problems(_read(path)) == []


def test_the_kind_filter_check_finds_the_gate_filter_08_had() -> None:
    notebook = nbformat.v4.new_notebook(
        cells=[nbformat.v4.new_code_cell('labkit.table(clock, kinds=["jsonrpc.request", "jsonrpc.response", "gate"])')]
    )
    assert [problem.split(":")[0] for problem in kind_filter_problems(notebook)] == ["kinds=['gate']"]


def unanswered_form_problems(notebook: nbformat.NotebookNode) -> list[str]:
    """Stored form outputs that do not say how the form was answered. The lessons say that under CI "a scripted user
    answers and the form says so"; a saved notebook keeps only a form's text, so that text must name the answer."""
    waiting = {in_language(language, FORM_FALLBACK) for language in ("en", "zh_CN")}
    return [
        f"cell {index}: {text[:60]!r}"
        for index, cell in enumerate(notebook.cells)
        for output in cell.get("outputs", [])
        if (text := str(output.get("data", {}).get("text/plain", ""))) in waiting
    ]


@pytest.mark.parametrize("path", ENGLISH + CHINESE, ids=lambda p: str(p.relative_to(ROOT)))
def test_every_stored_form_names_its_answer(path: Path) -> None:
    assert unanswered_form_problems(_read(path)) == []


_CHECK_CALL = re.compile(r"""\bcheck\(\s*["'](\d\d\.\d+)["']""")


def lesson_check_problems(notebook: nbformat.NotebookNode) -> list[str]:
    """Checks called in a lesson's body that print "Exercise NN.k" (10 §4 once printed "Exercise 10.4: done." in a
    notebook announcing three exercises), and exercise-section checks marked as the lesson's own."""
    from labkit.lessons.checks import EXERCISES

    found, in_exercises = [], False
    for cell in notebook.cells:
        if cell.cell_type == "markdown" and re.search(r"(?m)^## Exercises\b", cell.source):
            in_exercises = True
        if cell.cell_type != "code":
            continue
        for key in _CHECK_CALL.findall(cell.source):
            exercise = EXERCISES.get(key)
            if exercise is not None and exercise.of_the_lesson == in_exercises:
                where = "the exercises" if in_exercises else "the lesson's body"
                found.append(f"check({key!r}) in {where} is registered with of_the_lesson={exercise.of_the_lesson}")
    return found


@pytest.mark.parametrize("path", ENGLISH, ids=lambda p: str(p.relative_to(ROOT)))
def test_a_check_in_a_lessons_body_does_not_call_itself_an_exercise(path: Path) -> None:
    assert lesson_check_problems(_read(path)) == []
