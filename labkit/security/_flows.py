"""Information flow: data a trusted server returned never reaches an untrusted one unless a person says so."""

from __future__ import annotations

import base64
import binascii
import re
from collections.abc import Awaitable, Callable, Iterator
from dataclasses import dataclass
from typing import Any
from urllib.parse import unquote_plus

from mcp_types import Tool

from labkit._i18n import _

from ..host import Guard
from ..trace import Kind, Outcome, Trace

__all__ = ["Flow", "TaintGuard"]

_PIECE = 12
"""How many characters of a result an argument must carry, in any reading of it, to carry that result's data."""
_HEX = re.compile(r"\b(?:[0-9a-fA-F]{2}){12,}\b")
_BASE64 = re.compile(r"[A-Za-z0-9+/_-]{16,}={0,2}")


@dataclass(frozen=True)
class Flow:
    """Data of a trusted server on its way to an untrusted one: a question of its own, naming both (notebook 07).

    `sources` are the trusted results whose data the call carries (`server/tool`); `argument` is where it sits
    in the call, and `data` a piece of it, as the person is shown it.
    """

    sources: tuple[str, ...]
    target: str
    tool: str
    argument: str
    data: str

    @property
    def source_servers(self) -> tuple[str, ...]:
        return tuple(dict.fromkeys(source.split("/", 1)[0] for source in self.sources))

    @property
    def question(self) -> str:
        return _(
            "Send data from {sources} (a server the host trusts) to {target}, a server the host does NOT trust? "
            "The call {tool} carries it in {argument!r}: {data!r}"
        ).format(
            sources=", ".join(self.sources), target=self.target, tool=self.tool, argument=self.argument, data=self.data
        )


FlowAsker = Callable[[Flow], Awaitable[bool]]
"""Asked about one trusted→untrusted flow; yes lets the call go on to its other checks."""


class TaintGuard(Guard):
    """Taint follows data (notebook 07). Data from a trusted result on its way to an untrusted server is a flow
    question of its own, naming both servers and the data (refused when nobody can be asked); a call carrying a
    piece of an untrusted result needs a person's yes.

    A piece is any run of 12 characters a result showed the model and the user's question did not, found in an
    argument (or in all of them joined) as written or once decoded (percent-encoding, base64, hex), case and
    spaces ignored; the names of tools play no part.
    """

    def __init__(self, trace: Trace, trusted: Callable[[str], bool], ask: FlowAsker | None = None) -> None:
        self.trace, self.trusted, self.ask = trace, trusted, ask
        self.seen: list[tuple[str, bool, str]] = []  # (source, trusted?, text as the model read it)

    def on_result(self, server: str, name: str, text: str, is_error: bool) -> str:
        source, trusted = f"{server}/{name.rsplit('__', 1)[-1]}", self.trusted(server)
        if not trusted and not any(not t for _, t, _ in self.seen):
            self.trace.record(
                "host",
                "host",
                Kind.HOST_TAINT,
                _(
                    "untrusted content from {source} entered the context: "
                    "calls carrying it now need a "
                    "person's approval"
                ).format(source=source),
                server=server,
            )
        self.seen.append((source, trusted, _plain(text)))
        return text

    def flow(self, server: str, name: str, arguments: dict[str, Any]) -> Flow | None:
        """The trusted data this call would carry to an untrusted `server`, or None."""
        if self.trusted(server):
            return None
        said = _plain(" ".join(str((e.payload or {}).get("text", "")) for e in self.trace.of_kind(Kind.USER_ASK)))
        found = list(_strings(arguments))
        if len(found) > 1:  # data cut into short pieces, one per argument, is still the data
            found.append(("*", "".join(value for _, value in found)))
        for argument, value in found:
            sources = tuple(
                dict.fromkeys(source for source, trusted, text in self.seen if trusted and _carries(value, text, said))
            )
            if sources:
                return Flow(sources, server, name, argument, value if len(value) <= 120 else value[:120] + "…")
        return None

    async def on_call(self, server: str, tool: Tool, name: str, arguments: dict[str, Any]) -> str | None:
        flow = self.flow(server, name, arguments)
        if flow is None:
            return None
        approved = await self.ask(flow) if self.ask is not None else False
        self.trace.record(
            "host",
            "host",
            Kind.HOST_TAINT,
            (
                _("a person let data from {sources} go to the untrusted {target}")
                if approved
                else _("refused: data from {sources} would go to the untrusted {target}")
            ).format(sources=", ".join(flow.sources), target=flow.target),
            name=name,
            server=server,
            outcome=Outcome.APPROVED if approved else Outcome.REFUSED,
            by=self.name,
            payload={"sources": list(flow.sources), "target": flow.target, "argument": flow.argument},
        )
        if approved:
            return None
        return _(
            "its arguments carry data from {sources}, which the host trusts, to {target}, which it does not"
        ).format(sources=", ".join(flow.sources), target=flow.target)

    async def review(self, server: str, tool: Tool, name: str, arguments: dict[str, Any]) -> str | None:
        for _argument, value in _strings(arguments):
            for source, trusted, text in self.seen:
                if not trusted and _carries(value, text):
                    return _("its arguments carry data {towards} ({source})").format(
                        towards=_("from an untrusted result"), source=source
                    )
        return None


def _strings(value: Any, where: str = "") -> Iterator[tuple[str, str]]:
    """Every string and number in `value` with the argument it sits in; a number is data too."""
    if isinstance(value, str):
        yield where, value
    elif isinstance(value, (int, float)) and not isinstance(value, bool):
        yield where, str(value)
    elif isinstance(value, dict):
        for key, item in value.items():
            yield from _strings(item, f"{where}.{key}" if where else str(key))
    elif isinstance(value, list):
        for index, item in enumerate(value):
            yield from _strings(item, f"{where}[{index}]")


def _plain(text: str) -> str:
    return "".join(text.casefold().split())


def _readings(value: str) -> Iterator[str]:
    """The value as written and as a server could decode it: percent-encoding, base64 and hex runs."""
    yield value
    unquoted = unquote_plus(value)
    if unquoted != value:
        yield unquoted
    for run in _BASE64.findall(unquoted):
        try:
            decoded = base64.b64decode(run.replace("-", "+").replace("_", "/") + "=" * (-len(run) % 4))
            yield decoded.decode("utf-8")
        except (binascii.Error, UnicodeDecodeError, ValueError):
            continue
    for run in _HEX.findall(unquoted):
        try:
            yield bytes.fromhex(run).decode("utf-8")
        except UnicodeDecodeError:
            continue


def _carries(value: str, text: str, said: str = "") -> bool:
    """Whether any reading of `value` shares a run of 12 characters with `text` that the user did not say
    themselves (`said`); all three casefolded, spaces out."""
    for reading in _readings(value):
        plain = _plain(reading)
        pieces = (plain[i : i + _PIECE] for i in range(0, len(plain) - _PIECE + 1, _PIECE // 2))
        if any(piece in text and piece not in said for piece in pieces):
            return True
    return False
