"""Skills without servers: SKILL.md validation, the library and its resources, the model's reading of a skill."""

from __future__ import annotations

import pytest

from labkit.host import LocalToolResult
from labkit.lessons import SKILLS_DIR
from labkit.simulator import Dialogue, choose_skill, decide, read_catalog, read_method
from labkit.simulator._dialogue import Message, ToolOutcome, ToolSeen, ToolSpec
from labkit.skills import (
    SkillError,
    SkillLibrary,
    SkillLoader,
    check_python_source,
    load_skill,
    parse_skill,
    workspace_tools,
)
from labkit.trace import Trace, estimate_tokens

GOOD = "---\nname: plan-questions\ndescription: Answer questions about plans.\n---\n# Body\n"


def problems(text: str, folder: str = "plan-questions") -> tuple[str, ...]:
    with pytest.raises(SkillError) as caught:
        parse_skill(text, folder)
    return caught.value.problems


def test_a_minimal_skill_parses_into_front_matter_and_body() -> None:
    skill = parse_skill(GOOD, "plan-questions")
    assert (skill.name, skill.body) == ("plan-questions", "# Body\n")
    assert skill.description == "Answer questions about plans."
    assert skill.front_matter == {"name": "plan-questions", "description": "Answer questions about plans."}


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("# no front matter\n", "must start with YAML front matter"),
        ("---\nname: [unclosed\n---\n", "not valid YAML"),
        ("---\n- a list\n---\n", "must be a YAML mapping"),
        ("---\ndescription: d\n---\n", "the required field 'name' is missing"),
        ("---\nname: plan-questions\n---\n", "the required field 'description' is missing"),
        ("---\nname: plan-questions\ndescription: '  '\n---\n", "'description' must be a non-empty string"),
        ("---\nname: plan-questions\ndescription: d\nauthor: me\n---\n", "unknown front-matter field(s) author"),
        ("---\nname: plan-questions\ndescription: d\nmetadata: {version: 1.0}\n---\n", "'metadata' must map strings"),
        ("---\nname: plan-questions\ndescription: d\ncompatibility: ''\n---\n", "'compatibility' must be a string"),
    ],
)
def test_each_broken_rule_has_a_clear_message(text: str, expected: str) -> None:
    assert any(expected in p for p in problems(text)), problems(text)


@pytest.mark.parametrize(
    ("name", "expected"),
    [
        ("Plan-Questions", "has capital letters; use lowercase, e.g. 'plan-questions'"),
        ("plan_questions", "contains '_'; only a-z, 0-9 and '-' are allowed"),
        ("-plan", "must not start or end with a hyphen"),
        ("plan--questions", "must not contain two hyphens in a row"),
        ("p" * 65, "has 65 characters; at most 64 are allowed"),
    ],
)
def test_names_break_the_naming_rules(name: str, expected: str) -> None:
    found = problems(f"---\nname: {name}\ndescription: d\n---\n", folder=name)
    assert any(expected in p for p in found), found


@pytest.mark.parametrize("name", ["Plan_Questions", "Plan Questions!", "-Plan--Q-", "ÜBER_skill", "P" * 70 + "_x"])
def test_the_name_a_capital_letter_message_suggests_breaks_no_rule(name: str) -> None:
    """Notebook 06 printed "use lowercase, e.g. 'plan_questions'", a name the next line refused."""
    found = problems(f"---\nname: {name}\ndescription: d\n---\n", folder=name)
    suggested = next(p for p in found if "capital letters" in p).rsplit("e.g. ", 1)[1].strip("'")
    assert parse_skill(f"---\nname: {suggested}\ndescription: d\n---\n", suggested).name == suggested


def test_the_name_must_match_the_folder_and_every_problem_is_listed() -> None:
    found = problems("---\nname: Plans\ndescription: d\n---\n", folder="plan-questions")
    assert len(found) == 2
    assert "does not match the folder name 'plan-questions'" in found[1]
    assert "'plan-questions'" in str(SkillError("plan-questions", list(found))).splitlines()[0]


def test_a_long_description_is_refused() -> None:
    found = problems(f"---\nname: plan-questions\ndescription: {'x' * 1025}\n---\n")
    assert "1025 characters; at most 1024" in found[0]


def test_a_folder_without_skill_md(tmp_path) -> None:
    with pytest.raises(SkillError, match=r"has no SKILL.md"):
        load_skill(tmp_path)


def test_the_shipped_skills_are_valid_and_list_their_files() -> None:
    library = SkillLibrary.from_folders(SKILLS_DIR, SKILLS_DIR / "untrusted")
    assert library.names == ["code-review", "plan-questions", "weekly-report", "quick-chart"]
    plans = library.get("plan-questions")
    assert plans.resources == ("references/plan-rules.md", "references/pricing.md")
    assert library.get("quick-chart").allowed_tools == ("render_error_trend",)
    for skill in library:
        assert read_method(skill.body), f"{skill.name} has no Method the simulated model can follow"


def test_the_catalog_holds_names_and_descriptions_only() -> None:
    library = SkillLibrary.from_folders(SKILLS_DIR)
    catalog = library.catalog()
    assert read_catalog(catalog) == [(s.name, " ".join(s.description.split())) for s in library]
    assert "## Method" not in catalog and len(catalog) < len(library.everything()) / 2


@pytest.mark.parametrize(
    "path",
    [
        "../weekly-report/SKILL.md",
        "/etc/passwd",
        "references/../../code-review/SKILL.md",
        "references\\plan-rules.md",
        "",
        "SKILL2.md",
    ],
)
def test_resources_outside_the_skill_folder_are_refused(path: str) -> None:
    library = SkillLibrary.from_folders(SKILLS_DIR)
    with pytest.raises(ValueError, match=r"refused|has no file"):
        library.read_resource("plan-questions", path)


async def test_the_loader_refuses_a_resource_before_its_skill_is_loaded() -> None:
    trace = Trace()
    loader = SkillLoader(SkillLibrary.from_folders(SKILLS_DIR), trace)
    load, read = (tool.handler for tool in loader.tools)
    early = await read({"skill": "plan-questions", "path": "references/plan-rules.md"})
    assert early.is_error and "load the skill" in early.text
    assert not (await load({"name": "plan-questions"})).is_error
    escape = await read({"skill": "plan-questions", "path": "../code-review/SKILL.md"})
    assert escape == LocalToolResult(escape.text, True) and "refused" in escape.text
    assert [e.kind for e in trace] == ["skill.refuse", "skill.load", "skill.refuse"]


def test_the_token_estimate_is_characters_over_four_rounded_up_for_english() -> None:
    assert [estimate_tokens(t) for t in ("", "abc", "abcd", "abcde", "family plan")] == [0, 1, 1, 2, 3]


def test_the_token_estimate_counts_each_cjk_character_as_a_token() -> None:
    assert estimate_tokens("家庭套餐最多几个账号") == 10  # ten characters, not ceil(10 / 4) = 3
    assert estimate_tokens("家庭套餐？") == 5  # full-width punctuation is CJK too
    assert estimate_tokens("のプラン") == 4 and estimate_tokens("요금제") == 3
    # mixed text: the CJK characters, plus the rest at four characters per token, rounded up
    assert estimate_tokens("plan 家庭套餐") == 4 + 2  # "plan " is 5 characters -> 2
    assert estimate_tokens("→ … ⟦x⟧") == 2  # arrows, ellipses and brackets of the trace are not CJK


def test_the_static_check_finds_the_sample_file_problems() -> None:
    findings = check_python_source((SKILLS_DIR / "code-review" / "assets" / "discount.py").read_text())
    assert [f["severity"] for f in findings] == ["high"] * 3 + ["medium"] * 2 + ["low"] * 2
    assert {f["rule"] for f in findings} == {
        "mutable-default",
        "bare-except",
        "unused-import",
        "compare-to-none",
        "missing-docstring",
    }
    assert check_python_source("def f(:\n")[0]["rule"] == "syntax-error"


async def test_the_workspace_refuses_paths_outside_its_root() -> None:
    read_file, _ = (tool.handler for tool in workspace_tools(SKILLS_DIR))
    assert (await read_file({"path": "../labkit/__init__.py"})).is_error
    assert not (await read_file({"path": "code-review/assets/discount.py"})).is_error


# --- the simulated model reading skills (pure decisions, no SDK) ---------------------------------

LOAD = ToolSpec("load_skill", "Load a skill.", {"type": "object", "properties": {"name": {"type": "string"}}})
CATALOG = SkillLibrary.from_folders(SKILLS_DIR).catalog()


def first_decision(question: str, system: str = CATALOG):
    return decide(Dialogue([Message("user", question)], [LOAD], system=system))


@pytest.mark.parametrize(
    ("question", "skill"),
    [
        ("How many accounts does the family plan allow?", "plan-questions"),
        ("Write the weekly order report for 2026-W44.", "weekly-report"),
        ("Can you audit this Python file: servers/plans.py?", "code-review"),
        ("Use the weekly-report skill, please.", "weekly-report"),
    ],
)
def test_the_model_loads_the_matching_skill(question: str, skill: str) -> None:
    decision = first_decision(question)
    assert [(c.name, c.arguments) for c in decision.calls] == [("load_skill", {"name": skill})]


@pytest.mark.parametrize("question", ["What is the weather in Hangzhou?", "Why did order-service errors rise?"])
def test_a_skill_whose_description_does_not_match_is_not_loaded(question: str) -> None:
    decision = first_decision(question)
    assert not decision.calls


def test_without_a_catalog_the_model_does_not_load_skills() -> None:
    assert not first_decision("How many accounts does the family plan allow?", system="").calls


def test_sentences_that_say_when_not_to_use_a_skill_do_not_count() -> None:
    catalog = [("plans", "Answer plan questions. Not for orders, errors or logs.")]
    assert choose_skill(catalog, "Why did order errors rise in the logs?")[0] is None


def test_the_model_follows_the_method_after_the_body_arrives() -> None:
    body = '## Method\n1. Call `get_plan(plan=<family|personal>)`.\n2. Answer "{plan}: {max_accounts}" for each.\n'
    get_plan = ToolSpec("get_plan", "Look up a plan.", {"type": "object", "properties": {"plan": {"type": "string"}}})
    loaded = [
        Message("user", "How many accounts do the personal and family plans allow?"),
        Message("assistant", calls=(ToolSeen("c1", "load_skill", {"name": "plan-questions"}),)),
        Message("user", results=(ToolOutcome("c1", body),)),
    ]
    decision = decide(Dialogue(loaded, [LOAD, get_plan], system=CATALOG))
    assert [c.arguments for c in decision.calls] == [{"plan": "personal"}, {"plan": "family"}]
    answered = [
        *loaded,
        Message(
            "assistant",
            calls=(ToolSeen("c2", "get_plan", {"plan": "personal"}), ToolSeen("c3", "get_plan", {"plan": "family"})),
        ),
        Message(
            "user",
            results=(
                ToolOutcome("c2", '{"plan": "personal", "max_accounts": 3}'),
                ToolOutcome("c3", '{"plan": "family", "max_accounts": 6}'),
            ),
        ),
    ]
    final = decide(Dialogue(answered, [LOAD, get_plan], system=CATALOG))
    assert final.text.endswith("personal: 3 family: 6") and not final.calls
