"""Checks for notebook 09 (remote servers: who is calling): each one signs real users in at the lab's
authorization server and runs real protected servers on the learner's answer."""

from __future__ import annotations

import inspect
import time
from collections.abc import Awaitable, Callable
from contextlib import ExitStack
from typing import Any

import anyio
import httpx2

from labkit._i18n import N_, _, listing

from ...host import Host, HttpRefused, SignIn
from ...processes import ServerSpec, http_server
from ...server_contract import AUTH_ISSUER_ENV
from ...trace import Trace
from .._exercises import register, run_sync
from .._remote import authorization_server

__all__ = ["check_refresh", "check_token_decisions", "check_who_sees_what"]

_USERS = ("alice", "bob")
_WHO_SEES_WHAT = ("orders", "jobs")
_LOG_ARGS = {"service": "order-service", "since": "2026-10-29T20:00"}
_SHORT_TTL = 6
"""Seconds an access token lasts where a check makes one expire: long enough for a sign-in and a first call on a
busy machine (a token that expires in between is asked for again), short enough to wait for."""


class _Consent:
    """The scripted user behind the checks' sign-ins: allows, and counts how often it was asked."""

    def __init__(self) -> None:
        self.asked = 0

    async def __call__(self, message: str, schema: dict[str, Any]) -> dict[str, Any]:
        self.asked += 1
        return {"allow": True}


def _protected(running: ExitStack, name: str, issuer: str) -> str:
    return running.enter_context(http_server(name, env={AUTH_ISSUER_ENV: issuer}))


async def _tools_by_user(servers: tuple[str, ...]) -> dict[str, list[str]]:
    with ExitStack() as running:
        issuer = running.enter_context(authorization_server())
        specs = [ServerSpec(name, url=_protected(running, name, issuer)) for name in servers]
        seen: dict[str, list[str]] = {}
        for user in _USERS:
            async with Host(Trace(), specs, sign_in=SignIn(_Consent(), user=user)) as host:
                seen[user] = sorted(tool.name for tool in host.tools)
        return seen


@register(
    "09.1",
    N_("A protected server lists, and lets call, only the tools the caller's token has the scopes for."),
    N_("§3 Two users, two tool lists"),
)
def check_who_sees_what(answer: Any) -> str | None:
    if not isinstance(answer, dict) or set(answer) != set(_USERS):
        return _("answer_1 should be a dict with one key per user, {users}.").format(users=listing(_USERS))
    seen = run_sync(lambda: _tools_by_user(_WHO_SEES_WHAT))
    for user in _USERS:
        if sorted(answer[user]) != seen[user]:
            return _("{user} signed in to {servers} is offered {seen}, not {given}.").format(
                user=user, servers=" + ".join(_WHO_SEES_WHAT), seen=seen[user], given=sorted(answer[user])
            )
    return None


async def _introspect(http: httpx2.AsyncClient, issuer: str, token: str) -> dict[str, Any]:
    claims: dict[str, Any] = (await http.post(f"{issuer}/introspect", data={"token": token})).json()
    return claims


async def _token_cases() -> list[tuple[str, dict[str, Any], str, str, bool]]:
    """(what the case is, the introspection answer, the server's URL, the scope the call needs, accept?),
    from tokens the lab's authorization server really issued."""
    with ExitStack() as running:
        issuer = running.enter_context(authorization_server())
        logs, charts = _protected(running, "logs", issuer), _protected(running, "charts", issuer)
        tokens = {}
        for user in _USERS:
            sign_in = SignIn(_Consent(), user=user)
            async with Host(Trace(), [ServerSpec("logs", url=logs)], sign_in=sign_in):
                pass
            stored = sign_in.stores["logs"].tokens
            assert stored is not None
            tokens[user] = stored.access_token
        short_issuer = running.enter_context(authorization_server(token_ttl=_SHORT_TTL))
        short_logs = _protected(running, "logs", short_issuer)
        short = SignIn(_Consent(), user="alice")
        async with Host(Trace(), [ServerSpec("logs", url=short_logs)], sign_in=short):
            pass
        expiring = short.stores["logs"].tokens
        assert expiring is not None and expiring.expires_in is not None
        await anyio.sleep(expiring.expires_in + 1)
        async with httpx2.AsyncClient(timeout=10.0) as http:
            alice = await _introspect(http, issuer, tokens["alice"])
            bob = await _introspect(http, issuer, tokens["bob"])
            expired = await _introspect(http, short_issuer, expiring.access_token)
            unknown = await _introspect(http, issuer, "not-a-token-anyone-issued")
    return [
        (_("alice's token, at the server it was issued for, for a read"), alice, logs, "read", True),
        (_("alice's token, at the server it was issued for, for a write"), alice, logs, "write", True),
        (_("bob's token, for a read"), bob, logs, "read", True),
        (_("bob's token, for a write (bob was granted read only)"), bob, logs, "write", False),
        (_("alice's token for the logs server, presented to the charts server"), alice, charts, "read", False),
        (
            _("a token past its expiry (the authorization server says it is no longer active)"),
            expired,
            short_logs,
            "read",
            False,
        ),
        (_("alice's token, with an exp already passed"), {**alice, "exp": int(time.time()) - 60}, logs, "read", False),
        (_("a token nobody issued"), unknown, logs, "read", False),
        (
            _("a token whose scope is 'read-only', for a read (scopes are whole words)"),
            {**bob, "scope": "read-only"},
            logs,
            "read",
            False,
        ),
    ]


@register(
    "09.2",
    N_(
        "A protected server accepts a token only if it is active, issued for this server (audience), "
        "not expired, and carries the scope the request needs."
    ),
    N_("§4 Tokens a server refuses"),
)
def check_token_decisions(decide: Any) -> str | None:
    if not callable(decide) or inspect.iscoroutinefunction(decide):
        return _("answer_2 should be a plain function (claims, resource, scope) -> True or False.")
    for case, claims, resource, scope, accept in run_sync(_token_cases):
        verdict = decide(dict(claims), resource, scope)
        if not isinstance(verdict, bool):
            return _("answer_2 returned {value!r} for {case}; it should return True or False.").format(
                value=verdict, case=case
            )
        if verdict != accept:
            wanted = _("accept") if accept else _("refuse")
            return _("for {case}, answer_2 should {wanted} it.").format(case=case, wanted=wanted)
    return None


Comeback = Callable[[SignIn, str], Awaitable[Any]]


async def _after_expiry(comeback: Comeback) -> tuple[Any, int, bool, BaseException | None]:
    """The learner's `comeback` run after alice's token expired: its result, how often the user was asked,
    whether the sign-in it was given holds a renewed token, and what it raised."""
    consent = _Consent()
    with (
        authorization_server(token_ttl=_SHORT_TTL) as issuer,
        http_server("logs", env={AUTH_ISSUER_ENV: issuer}) as url,
    ):
        sign_in = SignIn(consent, user="alice")
        async with Host(Trace(), [ServerSpec("logs", url=url)], sign_in=sign_in):
            pass
        expired = sign_in.stores["logs"].tokens
        assert expired is not None and expired.expires_in is not None
        await anyio.sleep(expired.expires_in + 1)
        result, error = None, None
        try:
            result = await comeback(sign_in, url)
        except Exception as raised:  # noqa: BLE001 - the learner's code may fail in any way; the verdict says how
            error = raised
        now = sign_in.stores["logs"].tokens
        renewed = now is not None and now.access_token != expired.access_token
        return result, consent.asked, renewed, error


@register(
    "09.3",
    N_(
        "An expired access token is renewed with the refresh token the host kept: the user is not asked "
        "again, and no token is ever typed into a request by hand."
    ),
    N_("§4 Tokens a server refuses"),
)
def check_refresh(comeback: Any) -> str | None:
    if not inspect.iscoroutinefunction(comeback):
        return _("answer_3 should be an async function (sign_in, url) that calls query_errors.")
    result, asked, renewed, error = run_sync(lambda: _after_expiry(comeback))
    if isinstance(error, HttpRefused):
        return _("the logs server refused the call (HTTP {status}): a token sent by hand is not renewed.").format(
            status=error.status
        )
    if error is not None:
        return _("answer_3 failed: {error_type}: {error}").format(error_type=type(error).__name__, error=error)
    if asked != 1 or not renewed:
        return _(
            "the sign_in you were given still holds the expired token: connect with it, and its refresh "
            "token renews the access token without asking the user again."
        )
    if getattr(result, "is_error", True) or not getattr(result, "text", ""):
        return _("answer_3 should return the result of query_errors (a ToolResult), not {value!r}.").format(
            value=result
        )
    return None
