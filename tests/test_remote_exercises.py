"""Notebook 09's checks refuse answers that break one rule each, and say which case, against real servers."""

from __future__ import annotations

import time
from typing import Any

from labkit import Host, ServerSpec, SignIn, Trace, check, scripted_form

LOG_ARGS = {"service": "order-service", "since": "2026-10-29T20:00"}


def _accepts(*, audience: bool = True, expiry: bool = True, whole_words: bool = True) -> Any:
    """A token decision with one of the rules left out."""

    def decide(claims: dict[str, Any], resource: str, scope: str) -> bool:
        granted = str(claims.get("scope", ""))
        return (
            claims.get("active") is True
            and (not audience or claims.get("aud") == resource)
            and (scope in granted.split() if whole_words else scope in granted)
            and (not expiry or claims.get("exp", 0) > time.time())
        )

    return decide


def test_the_whole_list_of_each_user_is_wanted() -> None:
    verdict = check("09.1", {"alice": ["query_orders"], "bob": ["query_orders"]})
    assert not verdict.passed and "alice" in verdict.message


def test_a_decision_that_ignores_the_audience_is_refused() -> None:
    verdict = check("09.2", _accepts(audience=False))
    assert not verdict.passed and "charts" in verdict.message


def test_a_decision_that_reads_scopes_as_a_substring_is_refused() -> None:
    verdict = check("09.2", _accepts(whole_words=False))
    assert not verdict.passed and "read-only" in verdict.message


def test_a_decision_that_ignores_exp_is_refused() -> None:
    verdict = check("09.2", _accepts(expiry=False))
    assert not verdict.passed and "exp" in verdict.message


def test_the_rules_of_lesson_09_pass() -> None:
    assert check("09.2", _accepts()).passed


async def _token_by_hand(sign_in: SignIn, url: str) -> Any:
    token = sign_in.stores["logs"].tokens
    assert token is not None
    headers = {"Authorization": f"Bearer {token.access_token}"}
    async with Host(Trace(), [ServerSpec("logs", url=url, headers=headers)]) as host:
        return await host.call("query_errors", LOG_ARGS)


async def _signed_in_again(sign_in: SignIn, url: str) -> Any:
    again = SignIn(scripted_form({"allow": True}), user="alice")
    async with Host(Trace(), [ServerSpec("logs", url=url)], sign_in=again) as host:
        return await host.call("query_errors", LOG_ARGS)


async def _same_sign_in(sign_in: SignIn, url: str) -> Any:
    async with Host(Trace(), [ServerSpec("logs", url=url)], sign_in=sign_in) as host:
        return await host.call("query_errors", LOG_ARGS)


def test_an_expired_token_sent_by_hand_is_refused_by_the_server() -> None:
    verdict = check("09.3", _token_by_hand)
    assert not verdict.passed and "401" in verdict.message


def test_the_same_sign_in_refreshes_without_asking_again() -> None:
    assert check("09.3", _same_sign_in).passed


def test_signing_in_anew_is_not_a_refresh() -> None:
    """A new SignIn gets the call answered too, but by asking the user again: the check sees the token it
    gave the learner was never renewed."""
    verdict = check("09.3", _signed_in_again)
    assert not verdict.passed and "refresh" in verdict.message
