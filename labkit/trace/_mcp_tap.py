"""The MCP wire tap: records every JSON-RPC frame a client transport carries, in both directions."""

from __future__ import annotations

import json
import os
from pathlib import Path
from types import TracebackType
from typing import Any, BinaryIO

import anyio
from mcp.client._transport import Transport, TransportStreams
from mcp.shared.message import SessionMessage

from labkit._i18n import _

from ._events import Actor, Trace, by_reference
from ._kinds import Kind
from ._summaries import frame_kind, summarise_frame

__all__ = ["TappedTransport", "frame_payload"]


def frame_payload(message: SessionMessage) -> dict[str, Any]:
    """The JSON object this message is on the wire (what stdio writes and HTTP posts)."""
    return message.message.model_dump(by_alias=True, mode="json", exclude_unset=True)


class TappedTransport:
    """Wraps any client transport and records each frame into a `Trace` (notebook 02).

    `Client(TappedTransport(stdio_client(...), trace, server="logs"))` behaves exactly like the
    inner transport: every item is passed through untouched, including exceptions (a line that is
    not JSON) and the end of the stream (a server that died), which are recorded as such.

    `server_events` names the file a lab server reports its inside work to (`servers/_report.py`);
    those events are recorded just before the server's next frame, which they preceded.
    """

    def __init__(
        self,
        inner: Transport,
        trace: Trace,
        *,
        server: str,
        server_events: Path | None = None,
        made_up: dict[Any, int] | None = None,
    ) -> None:
        self._inner = inner
        self.made_up = made_up if made_up is not None else {}
        """Request ids whose error reply the SDK's client makes up itself (from an HTTP status), not the server."""
        self.trace = trace
        self.server = server
        self.server_events = server_events
        self.era: str | None = None
        self._pending: dict[tuple[str, Any], tuple[str | None, str | None]] = {}
        # The server's events file, held open once it exists: a frame costs one read, not a stat, an open and a seek.
        self._events: BinaryIO | None = None
        self._unfinished = b""  # a line the server has not finished writing yet

    async def __aenter__(self) -> TransportStreams:
        read, write = await self._inner.__aenter__()
        # A restarted server appends to the same file: what an earlier connection recorded is not news.
        if self._open_events():
            self._events.seek(0, os.SEEK_END)  # type: ignore[union-attr]
        return _TapRead(read, self), _TapWrite(write, self)  # type: ignore[return-value]  # the streams' protocol

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> bool | None:
        try:
            return await self._inner.__aexit__(exc_type, exc, tb)
        finally:
            if self._events is not None:
                self._events.close()
                self._events = None

    def record_frame(self, outgoing: bool, message: SessionMessage) -> None:
        """Record one frame; a failure to record is itself recorded, never raised into the SDK."""
        try:
            self._record_frame(outgoing, message)
        except Exception as exc:  # noqa: BLE001 - the tap must not change what the SDK sees
            self.record_failure(Kind.TAP_ERROR, f"could not record a frame: {type(exc).__name__}: {exc}")

    def _record_frame(self, outgoing: bool, message: SessionMessage) -> None:
        payload = frame_payload(message)
        kind = frame_kind(payload)
        self._learn_era(payload)
        method = payload.get("method")
        name = _frame_name(payload, method)
        frame_id = payload.get("id")
        # A request's reply travels the other way; remember what was asked to name the reply.
        sender = "client" if outgoing else "server"
        if kind == Kind.JSONRPC_REQUEST:
            self._pending[(sender, frame_id)] = (method, name)
        elif kind in (Kind.JSONRPC_RESPONSE, Kind.JSONRPC_ERROR):
            requester = "server" if outgoing else "client"
            method, name = self._pending.pop((requester, frame_id), (None, None))
        src: Actor = "client" if outgoing else "server"
        dst: Actor = "server" if outgoing else "client"
        summary = summarise_frame(payload, method)
        made_up = self.made_up.pop(frame_id, None) if kind == Kind.JSONRPC_ERROR and not outgoing else None
        if made_up is not None:
            # The server sent HTTP, not this JSON-RPC error: the SDK's client wrote it, so it is the client's frame.
            src = "client"
            summary = _(
                "{summary} (made up by the SDK's client from HTTP {status}; the server sent no JSON-RPC)"
            ).format(summary=summary, status=made_up)
        kept, refs = by_reference(payload)  # a 64 MiB result is not held twice (the SDK has it)
        self.trace.record(
            src,
            dst,
            kind,
            summary,
            ref=frame_id,
            name=name,
            payload=kept,
            server=self.server,
            era=self.era,
            method=method,
            payload_refs=refs or None,
            **({"made_up_from": made_up} if made_up is not None else {}),
        )

    def record_server_events(self) -> None:
        """Record what the server reported since the last frame (complete lines only)."""
        if self.server_events is None or not self._open_events():
            return
        try:
            self._read_server_events()
        except (OSError, ValueError, KeyError) as exc:
            self.record_failure(Kind.TAP_ERROR, f"could not read the server's events: {type(exc).__name__}: {exc}")

    def _open_events(self) -> bool:
        """Whether the server's events file is open (opened now if it has come to exist)."""
        if self._events is None and self.server_events is not None:
            try:
                self._events = self.server_events.open("rb")
            except FileNotFoundError:
                return False
        return self._events is not None

    def _read_server_events(self) -> None:
        assert self._events is not None
        chunk = self._unfinished + self._events.read()
        cut = chunk.rfind(b"\n") + 1
        complete, self._unfinished = chunk[:cut], chunk[cut:]
        for line in complete.decode("utf-8").splitlines():
            item = json.loads(line)
            if not _own_report(item):
                # Attributed by the channel it came on: the file is this server's, whatever the line claims.
                self.record_failure(
                    Kind.TAP_FORGED,
                    f"{self.server} reported an event as {item.get('src')!r} → "
                    f"{item.get('dst')!r} {item.get('kind')!r}; a server reports only its own work",
                )
                continue
            self.trace.record(
                item["src"],
                item["dst"],
                item["kind"],
                item["summary"],
                payload=item.get("payload"),
                server=self.server,
                era=self.era,
            )

    def record_failure(self, what: str, detail: str) -> None:
        self.trace.record(
            "server", "client", what, detail, payload={"detail": detail}, server=self.server, era=self.era
        )

    @property
    def unanswered(self) -> list[tuple[str, Any]]:
        """(sender, id) of requests whose reply has not been seen."""
        return list(self._pending)

    def _learn_era(self, payload: dict[str, Any]) -> None:
        params = payload.get("params") or {}
        if payload.get("method") == "initialize":
            self.era = params.get("protocolVersion", self.era)
        version = (params.get("_meta") or {}).get("io.modelcontextprotocol/protocolVersion")
        if version:
            self.era = version


def _frame_name(payload: dict[str, Any], method: str | None) -> str | None:
    params = payload.get("params") or {}
    if method in ("tools/call", "prompts/get"):
        return params.get("name") or method
    return method


class _StreamProxy:
    """Delegates everything to the SDK's stream; subclasses intercept receive or send."""

    def __init__(self, inner: Any, tap: TappedTransport) -> None:
        self._inner, self._tap = inner, tap

    async def aclose(self) -> None:
        await self._inner.aclose()

    async def __aenter__(self) -> _StreamProxy:
        await self._inner.__aenter__()
        return self

    async def __aexit__(self, *exc_info: Any) -> bool | None:
        return await self._inner.__aexit__(*exc_info)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._inner, name)


class _TapRead(_StreamProxy):
    async def receive(self) -> SessionMessage | Exception:
        try:
            item = await self._inner.receive()
        except Exception as exc:  # end of stream: the server went away
            self._tap.record_server_events()
            self._tap.record_failure(
                Kind.TRANSPORT_CLOSED, _("{error}: the server closed the stream").format(error=type(exc).__name__)
            )
            raise
        self._tap.record_server_events()
        if isinstance(item, Exception):
            self._tap.record_failure(Kind.TRANSPORT_ERROR, f"{type(item).__name__}: {item}")
        else:
            self._tap.record_frame(False, item)
        return item

    def __aiter__(self) -> _TapRead:
        return self

    async def __anext__(self) -> SessionMessage | Exception:
        try:
            return await self.receive()
        except (anyio.EndOfStream, anyio.ClosedResourceError) as exc:
            raise StopAsyncIteration from exc


class _TapWrite(_StreamProxy):
    async def send(self, item: SessionMessage, /) -> None:
        self._tap.record_frame(True, item)
        await self._inner.send(item)


_REPORTERS = ("server", "system")


def _own_report(item: dict[str, Any]) -> bool:
    """A server's report names only the server and its systems, and a `server.*` or `system.*` kind."""
    kind = str(item.get("kind", ""))
    return (
        item.get("src") in _REPORTERS
        and item.get("dst") in _REPORTERS
        and kind.split(".", 1)[0] in _REPORTERS
        and isinstance(item.get("summary"), str)
    )
