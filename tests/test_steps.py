"""The step rules over the recorded golden canonical run: the article's count, and what the other choice gives."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from labkit import count_steps, group_steps
from labkit.trace import Event

GOLDEN = Path(__file__).parent / "golden" / "canonical.json"


@pytest.fixture(scope="module")
def events() -> list[Event]:
    # The golden file drops the times (they vary); grouping never reads them.
    return [Event(**{"t": 0.0, **item}) for item in json.loads(GOLDEN.read_text(encoding="utf-8"))]


def test_the_article_counts_the_final_hand_off_for_the_model(events: list[Event]) -> None:
    assert count_steps(group_steps(events)) == {"host": 9, "server": 4, "model": 3, "user": 2, "system": 1}


def test_counting_the_hand_off_for_the_host_moves_one_step_and_nothing_else(events: list[Event]) -> None:
    article, other = count_steps(group_steps(events)), count_steps(group_steps(events, final_handoff="host"))
    assert other["host"] == article["host"] + 1
    assert {k: v for k, v in other.items() if k != "host"} == {k: v for k, v in article.items() if k != "host"}


def test_an_unknown_choice_names_the_valid_ones(events: list[Event]) -> None:
    with pytest.raises(ValueError, match=r"'model'.*'host'"):
        group_steps(events, final_handoff="user")
