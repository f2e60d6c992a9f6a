"""How a host reaches each server: starts it or its URL, opens one tapped MCP client, shows its forms to the user."""

from __future__ import annotations

import tempfile
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import AbstractAsyncContextManager, ExitStack, asynccontextmanager
from contextvars import ContextVar
from dataclasses import replace
from enum import StrEnum
from pathlib import Path
from typing import Any, Literal
from urllib.parse import urlsplit

import anyio
import httpx2
from mcp import Client
from mcp.client import session as sdk_session
from mcp.shared.exceptions import MCPError
from mcp_types import ElicitRequestParams, ElicitRequestURLParams, ElicitResult, Implementation, ListRootsResult, Root
from pydantic import FileUrl

from .._i18n import _
from .._time_limits import scaled
from ..processes import (
    HeldPort,
    LabTempDir,
    ServerEnd,
    ServerProcess,
    ServerSpec,
    ServerStartError,
    http_server,
    longest,
)
from ..server_contract import EVENTS_FILE_ENV
from ..trace import Kind, Meta, Outcome, Trace
from ._connection import Turn
from ._forms import url_consent
from ._http_record import HttpRecorder, sign_in_refusal
from ._pool import ServerPool
from ._router import ToolRouter
from ._tasks import TaskPolling
from ._tool_listing import on_tools_changed, tools_changed_stream
from ._transports import http_transport, sse_transport, stdio_transport

__all__ = ["ERAS", "FORM_ABOUT", "HOST_INFO", "Connector", "Elicitor", "FormTrust"]

ERAS = {"2026-07-28": "auto", "2025-11-25": "legacy"}
HOST_INFO = Implementation(name="labkit-host", version="0.1.0")
"""How the host names itself to servers (`clientInfo`); servers use it as the caller's name."""
Elicitor = Callable[[str, dict[str, Any]], Awaitable[dict[str, Any] | None]]
"""Shows a server's question as a form and returns the user's answers, or None to decline."""
FORM_ABOUT: ContextVar[str] = ContextVar("FORM_ABOUT", default="")
"""While an elicitor runs: which question this is and why (server, tool, era), for the form to say."""


class FormTrust(StrEnum):
    """Whether the host trusts the server whose form it shows (`meta["trust"]` of every `host.form`) (notebook 07)."""

    TRUSTED = "trusted"
    UNTRUSTED = "untrusted"
    UNKNOWN = "unknown"
    """The host was not told which servers it trusts (no shield)."""


_TRUST_SAID = {
    FormTrust.TRUSTED: lambda: _("a server the host trusts"),
    FormTrust.UNTRUSTED: lambda: _("a server the host does NOT trust"),
    FormTrust.UNKNOWN: lambda: _("the host was not told whether it trusts it"),
}


class Connector:
    """Opens the host's client to each server in its era, and answers the servers' forms through `elicit`."""

    def __init__(
        self,
        trace: Trace,
        pool: ServerPool,
        router: ToolRouter,
        *,
        era: str,
        elicit: Elicitor | None,
        input_required_max_rounds: int,
        roots: tuple[Path, ...] = (),
        tasks: bool = False,
    ) -> None:
        if era not in ERAS:
            raise ValueError(f"era must be one of {sorted(ERAS)}, not {era!r}")
        self.trace, self.pool, self.router = trace, pool, router
        self.era, self.elicit = era, elicit
        self.input_required_max_rounds = input_required_max_rounds
        self.roots = roots
        self.tasks = tasks
        self.sign_in: Any = None
        """A `SignIn` (notebook 09): the host signs in to protected HTTP servers through the SDK's OAuth client."""
        """The folders the host offers servers as `roots` (none: the capability is not declared)."""
        self.events: LabTempDir | None = None
        """The folder of the servers' own event files while the host runs."""
        self.trust: Callable[[str], bool] | None = None
        """Whether the host trusts a server, when it says (the shield does): every form then names it (notebook 07)."""

    @asynccontextmanager
    async def connect(self, spec: ServerSpec, turn: Turn) -> AsyncIterator[Client]:
        """Start the server (or reach its URL) and open one client to it; both end with the block.

        The client's first frame waits for `turn`, so servers started together still handshake in order.
        """
        assert self.events is not None
        # Each server its own folder: its reports are read from its own file, never another's.
        events = Path(tempfile.mkdtemp(prefix=f"{spec.name}-", dir=self.events.path)) / "events.jsonl"
        if spec.name not in self.pool.stderr:
            self.pool.stderr[spec.name] = tempfile.TemporaryFile(mode="w+")  # noqa: SIM115 - the pool closes it
        stderr = self.pool.stderr[spec.name]
        if spec.lab_server:
            spec = replace(spec, env={**spec.env, EVENTS_FILE_ENV: str(events)})
        processes = ExitStack()
        recorder = HttpRecorder(self.trace, spec.name)

        def changed() -> None:
            self.pool.tools_changed(spec.name)

        def ended(end: ServerEnd) -> None:
            self.pool.ends[spec.name] = end

        def running(process: ServerProcess) -> None:
            self.pool.processes[spec.name] = process

        opened = False

        def auth(url: str) -> Any:
            if self.sign_in is None:
                return None
            from ._oauth import oauth_provider  # the OAuth client, for hosts that sign in only

            recorder.origin = "{0.scheme}://{0.netloc}".format(urlsplit(url))
            return oauth_provider(spec.name, url, self.sign_in, self.trace)

        try:
            if spec.transport == "sse" and spec.url is not None:
                transport = sse_transport(
                    spec.url, self.trace, server=spec.name, headers=spec.headers, recorder=recorder
                )
            elif spec.url is not None:
                transport = http_transport(
                    spec.url, self.trace, server=spec.name, headers=spec.headers, recorder=recorder, auth=auth(spec.url)
                )
            elif spec.transport == "http":
                # Waiting for the port blocks, so it waits in a thread while the other servers start.
                if spec.serves_held_port and spec.name not in self.pool.ports:
                    self.pool.ports[spec.name] = HeldPort()  # started again, it serves the same port
                held = self.pool.ports.get(spec.name)
                started = http_server(
                    spec,
                    start_timeout=self.pool.start_timeout,
                    errlog=stderr,
                    held_port=held,
                    on_end=ended,
                    on_start=running,
                )
                url = await anyio.to_thread.run_sync(processes.enter_context, started)
                transport = http_transport(
                    url, self.trace, server=spec.name, server_events=events, recorder=recorder, auth=auth(url)
                )
            else:
                transport = stdio_transport(
                    spec, self.trace, errlog=stderr, server_events=events, on_end=ended, on_start=running
                )

            async def on_elicit(context: Any, params: Any) -> ElicitResult:
                return await self.on_elicit(spec.name, params)

            # The SDK gives `server/discover` 10 s of its own, then tries the old handshake, which a modern server
            # refuses once the late probe is answered: an error in the trace of a start that was only slow. A start
            # has one limit, the host's (scaled, moved on while the machine is busy), and the probe is given all of it.
            sdk_session.DISCOVER_TIMEOUT_SECONDS = max(
                sdk_session.DISCOVER_TIMEOUT_SECONDS, longest(scaled(self.pool.start_timeout))
            )
            async with Client(
                _after(turn, transport),
                mode=ERAS[self.era],
                elicitation_callback=on_elicit,
                client_info=HOST_INFO,
                input_required_max_rounds=self.input_required_max_rounds,
                list_roots_callback=self.on_list_roots if self.roots else None,
                message_handler=on_tools_changed(changed),
                extensions=[TaskPolling()] if self.tasks else [],
            ) as client:
                opened = True
                async with tools_changed_stream(client, changed):
                    yield client
        except Exception as error:
            refused = None if opened else recorder.refused(spec.url or spec.describe())
            if refused is not None:  # one error naming the server, the status and its challenge, not a group
                raise (sign_in_refusal(error) or refused) from error
            if not opened and spec.url is not None and (answer := _error_answer(error)) is not None:
                why = _("it answered before the session began with an error: {message}")
                raise ServerStartError(spec.name, spec.url, "", None, "", error=why.format(message=answer)) from None
            if not opened and spec.url is not None and (cause := _unreachable(error)) is not None:
                address = urlsplit(spec.url).netloc
                why = _("nothing answers at {address} ({cause}); check that the server runs and that its URL is right")
                raise ServerStartError(
                    spec.name, spec.url, "", None, "", error=why.format(address=address, cause=cause)
                ) from error
            raise
        finally:
            with anyio.CancelScope(shield=True):  # the child must be stopped even when the close was cut short
                await anyio.to_thread.run_sync(processes.close)

    async def on_list_roots(self, context: Any) -> ListRootsResult:
        """`roots/list`: the folders a server may work in, as the host chose them (notebook 08)."""
        return ListRootsResult(roots=[Root(uri=FileUrl(folder.as_uri()), name=folder.name) for folder in self.roots])

    async def on_elicit(self, server: str, params: ElicitRequestParams) -> ElicitResult:
        """A server's question, said to be that server's: shown as a form (its time is the user's, not the call's),
        answered or declined. The guards may decline it before the person sees it, and keep the answer from being
        sent; a URL-mode request shows the page's host apart from the server's words and is never opened."""
        if isinstance(params, ElicitRequestURLParams):
            url: str | None = params.url
            message, schema = url_consent(server, params)
        else:
            url, message, schema = None, params.message, dict(params.requested_schema)
        trust = self._trust(server)
        # Built here, where the request arrives: the record says whose form it is, never what the form's words claim.
        self.trace.record(
            "host",
            "user",
            Kind.HOST_FORM,
            _("shows the {server} server's form ({trust}): {message}").format(
                server=server, trust=_TRUST_SAID[trust](), message=params.message
            ),
            payload=params.model_dump(by_alias=True, mode="json", exclude_none=True),
            server=server,
            asked_by=server,
            trust=trust,
            url_host=urlsplit(url).hostname if url is not None else None,
        )
        refused = next((why for guard in self.pool.guards if (why := guard.on_form(server, message, schema))), None)
        if refused is not None:
            return self._declined(server, refused)
        about = self._about(server)
        if trust != FormTrust.UNKNOWN:
            about = _("{about}; {trust}").format(about=about, trust=_TRUST_SAID[trust]())
        token = FORM_ABOUT.set(about)
        try:
            with self.router.user_time():
                answer = await self.elicit(message, schema) if self.elicit is not None else None
        finally:
            FORM_ABOUT.reset(token)
        if url is not None and answer is not None and answer.get("consent") is not True:
            answer = None
        if answer is not None:
            refused = next((why for guard in self.pool.guards if (why := guard.on_answer(server, answer))), None)
            if refused is not None:
                return self._declined(server, refused)
        action: Literal["accept", "decline"] = "accept" if answer is not None else "decline"
        shown = self.trace.redacted(answer) if answer is not None else None
        self.trace.record("user", "host", Kind.USER_ANSWER, f"{action} {shown or ''}".strip(), payload=shown)
        # URL mode: the consent is the person's; the content was the host's own question, not the server's.
        return ElicitResult(action=action, content=answer if url is None else None)

    def _trust(self, server: str) -> FormTrust:
        if self.trust is None:
            return FormTrust.UNKNOWN
        return FormTrust.TRUSTED if self.trust(server) else FormTrust.UNTRUSTED

    def _declined(self, server: str, why: str) -> ElicitResult:
        self.trace.record(
            "host",
            "host",
            Kind.HOST_FORM,
            _("declined the {server} server's form: {why}").format(server=server, why=why),
            server=server,
            asked_by=server,
            trust=self._trust(server),
            outcome=Outcome.REFUSED,
        )
        return ElicitResult(action="decline")

    def _about(self, server: str) -> str:
        """Which call of `server`'s the form belongs to, and in which era's way it was asked."""
        calls = [
            e
            for e in self.trace
            if e.kind == Kind.JSONRPC_REQUEST
            and e.meta.get(Meta.METHOD) == "tools/call"
            and e.meta.get(Meta.SERVER) == server
        ]
        tool = calls[-1].name if calls else "?"
        if ERAS[self.era] == "legacy":
            return _(
                "the {era} server request (elicitation/create) during the {tool} call to the {server} server"
            ).format(era=self.era, tool=tool, server=server)
        tries = sum(e.name == tool and e.round == self.trace.round for e in calls)
        return _("round {n} of the {tool} call to the {server} server, {era} (input_required)").format(
            n=tries + 1, tool=tool, server=server, era=self.era
        )


def _error_answer(error: BaseException) -> str | None:
    """The JSON-RPC error a URL answered the opening with (one the SDK's task groups wrap), if that ended it."""
    if isinstance(error, BaseExceptionGroup):
        return next((found for inner in error.exceptions if (found := _error_answer(inner)) is not None), None)
    return error.error.message if isinstance(error, MCPError) else None


def _unreachable(error: BaseException) -> str | None:
    """What the connection attempt said, when `error` (or every error of its group) is that nothing could be reached."""
    if isinstance(error, BaseExceptionGroup):
        causes = [_unreachable(inner) for inner in error.exceptions]
        return causes[0] if causes and all(cause is not None for cause in causes) else None
    if isinstance(error, (httpx2.ConnectError, httpx2.ConnectTimeout)):
        return str(error) or type(error).__name__
    return None


@asynccontextmanager
async def _after(turn: Turn, transport: AbstractAsyncContextManager[Any]) -> AsyncIterator[Any]:
    """The transport started (the server spawned), its streams handed on only when `turn` says so."""
    async with transport as streams:
        await turn()
        yield streams
