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

from labkit._i18n import _, listing

from ..host import Guard, needs_approval
from ..trace import Kind, Outcome, Trace, base64_texts

__all__ = ["Flow", "Provenance", "TaintGuard"]

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
            sources=listing(self.sources), target=self.target, tool=self.tool, argument=self.argument, data=self.data
        )


FlowAsker = Callable[[Flow], Awaitable[bool]]
"""Asked about one trusted→untrusted flow; yes lets the call go on to its other checks."""


@dataclass(frozen=True)
class Provenance:
    """A value in a call to a trusted server that first appeared in an untrusted server's output (notebook 07).

    `source` is that result (`server/tool`), `target` the trusted server the call goes to; `argument` is where the
    value sits in the call, or "" when what the untrusted result chose is the call itself (it named the tool, the
    user did not). The untrusted server chose it, not the person: the question says so.
    """

    source: str
    target: str
    tool: str
    argument: str
    value: str

    @property
    def source_server(self) -> str:
        return self.source.split("/", 1)[0]

    @property
    def chosen(self) -> str:
        """What the untrusted server chose, as the trace and the questions name it: the argument, or the call."""
        return self.argument or _("the call itself")

    @property
    def question(self) -> str:
        if not self.argument:
            return _(
                "Approve {tool} on {target} (a server the host trusts)? You did not ask for this call: the result of "
                "{source}, a server the host does NOT trust, named it first. That server chose it, not you."
            ).format(tool=self.tool, target=self.target, source=self.source)
        return _(
            "Approve {tool} on {target} (a server the host trusts) with {argument!r} = {value!r}? That value first "
            "appeared in the result of {source}, a server the host does NOT trust: that server chose it, not you."
        ).format(tool=self.tool, target=self.target, argument=self.argument, value=self.value, source=self.source)


ProvenanceAsker = Callable[[Provenance], Awaitable[bool]]
"""Asked about a trusted call steered by an untrusted server's values; yes lets it go on to its other checks."""


class TaintGuard(Guard):
    """Taint follows data (notebook 07). Data from a trusted result on its way to an untrusted server is a flow
    question of its own, naming both servers and the data (refused when nobody can be asked); a call carrying a
    piece of an untrusted result needs a person's yes.

    A piece is any run of 12 characters a result showed the model and the user's question did not, found in an
    argument (or in all of them joined) as written or once decoded (percent-encoding, base64, hex), case and
    spaces ignored; the names of tools play no part.
    """

    def __init__(
        self,
        trace: Trace,
        trusted: Callable[[str], bool],
        ask: FlowAsker | None = None,
        ask_provenance: ProvenanceAsker | None = None,
    ) -> None:
        self.trace, self.trusted, self.ask, self.ask_provenance = trace, trusted, ask, ask_provenance
        self.seen: list[tuple[str, bool, str]] = []  # (source, trusted?, text as the model read it)
        self.words: list[tuple[str, bool, str]] = []  # the same, words kept apart: short values are matched whole

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
        self.words.append((source, trusted, _spaced("\n".join([text, *base64_texts(text)]))))
        return text

    def provenance(self, server: str, tool: Tool, name: str, arguments: dict[str, Any]) -> Provenance | None:
        """The first value of this call to a trusted `server` that an untrusted result named before the user or any
        trusted result did, or None. A value is matched whole (as a word, in any reading: percent, base64, hex);
        values the tool's own schema offers (enum, default) and single characters are nobody's choice. The tool is
        a value too: a call whose tool an untrusted result named and the user did not was that server's choice."""
        if not self.trusted(server):
            return None
        said = _spaced(" ".join(str((e.payload or {}).get("text", "")) for e in self.trace.of_kind(Kind.USER_ASK)))
        offered = _offered(tool.input_schema)
        for argument, value in _strings(arguments):
            if len(value.strip()) < 2 or value in offered:
                continue
            for reading in _readings(value):
                if _names(said, reading):
                    break
                first = self._first_named(reading)
                if first is not None and not first[1]:
                    shown = value if len(value) <= 120 else value[:120] + "…"
                    return Provenance(first[0], server, name, argument, shown)
        called = tool.name
        first = None if _names(said, called) else self._first_named(called)
        return Provenance(first[0], server, name, "", called) if first is not None and not first[1] else None

    def _first_named(self, value: str) -> tuple[str, bool] | None:
        """The first result (source, trusted?) that named `value` as a whole word."""
        return next(((source, t) for source, t, text in self.words if _names(text, value)), None)

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
            # A call a person is asked about (it writes, or it carries an untrusted result's data): the question must
            # say which of its values an untrusted server chose, whatever made the host ask.
            asked = needs_approval(tool) or await self.review(server, tool, name, arguments) is not None
            steered = self.provenance(server, tool, name, arguments) if asked else None
            return await self._steered(steered) if steered is not None else None
        approved = await self.ask(flow) if self.ask is not None else False
        self.trace.record(
            "host",
            "host",
            Kind.HOST_TAINT,
            (
                _("a person let data from {sources} go to the untrusted {target}")
                if approved
                else _("refused: data from {sources} would go to the untrusted {target}")
            ).format(sources=listing(flow.sources), target=flow.target),
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
        ).format(sources=listing(flow.sources), target=flow.target)

    async def _steered(self, steered: Provenance) -> str | None:
        approved = await self.ask_provenance(steered) if self.ask_provenance is not None else False
        self.trace.record(
            "host",
            "host",
            Kind.HOST_TAINT,
            (
                _("a person approved {argument!r} of {tool}, a value {source} chose")
                if approved
                else _("refused: {argument!r} of {tool} on the trusted {target} is a value {source} chose")
            ).format(argument=steered.chosen, tool=steered.tool, source=steered.source, target=steered.target),
            name=steered.tool,
            server=steered.target,
            outcome=Outcome.APPROVED if approved else Outcome.REFUSED,
            by=self.name,
            payload={"source": steered.source, "argument": steered.argument, "value": steered.value},
        )
        if approved:
            return None
        return _("its argument {argument!r} is a value {source}, a server the host does not trust, chose").format(
            argument=steered.chosen, source=steered.source
        )

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
        yield where, str(int(value)) if isinstance(value, float) and value.is_integer() else str(value)
    elif isinstance(value, dict):
        for key, item in value.items():
            yield from _strings(item, f"{where}.{key}" if where else str(key))
    elif isinstance(value, list):
        for index, item in enumerate(value):
            yield from _strings(item, f"{where}[{index}]")


def _offered(schema: Any) -> set[str]:
    """The values a tool's own schema offers (enum, const, default, examples), at any depth: the definition's."""
    found: set[str] = set()
    if isinstance(schema, dict):
        for key, item in schema.items():
            if key in ("enum", "examples") and isinstance(item, list):
                found.update(str(v) for v in item)
            elif key in ("const", "default") and not isinstance(item, (dict, list)):
                found.add(str(item))
            else:
                found |= _offered(item)
    elif isinstance(schema, list):
        for item in schema:
            found |= _offered(item)
    return found


def _spaced(text: str) -> str:
    return " ".join(text.casefold().split())


def _names(text: str, value: str) -> bool:
    """Whether `text` (spaced) holds `value` as a whole word or run of words, not inside a longer one."""
    wanted = _spaced(value)
    return bool(wanted) and re.search(rf"(?<!\w){re.escape(wanted)}(?!\w)", text) is not None


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
