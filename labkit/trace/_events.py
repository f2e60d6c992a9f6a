"""The trace: an append-only record of every message and decision in one run."""

from __future__ import annotations

import hashlib
import json
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import asdict, dataclass, field
from enum import StrEnum
from pathlib import Path
from typing import Any, Literal

__all__ = ["ACTORS", "LARGE_TEXT", "Actor", "Event", "Trace", "by_reference"]

Actor = Literal["user", "host", "model", "client", "server", "system", "auth"]
ACTORS: tuple[Actor, ...] = ("user", "host", "model", "client", "server", "system", "auth")
_REPLY_SUFFIXES = (".response", ".error", ".result", ".answer", ".closed")


@dataclass(frozen=True)
class Event:
    """One message or decision, as LAB_SPEC §2 lists its fields (introduced in notebook 00).

    `ref` is the JSON-RPC id or the model call id; `name` the method or tool; `meta` carries what
    a view may want besides the payload (protocol era, HTTP status, the server a frame belongs to).
    """

    seq: int
    t: float
    round: int
    src: Actor
    dst: Actor
    kind: str
    summary: str
    ref: str | int | None = None
    name: str | None = None
    payload: Any = None
    meta: dict[str, Any] = field(default_factory=dict)

    @property
    def is_reply(self) -> bool:
        """A reply travels back to whoever asked: responses, errors, results and answers."""
        return self.kind.endswith(_REPLY_SUFFIXES)

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


class Trace:
    """Append-only list of events, safe to write from asyncio tasks and threads (notebook 01)."""

    def __init__(self, events: list[Event] | None = None) -> None:
        self._events: list[Event] = list(events or [])
        self._lock = threading.Lock()
        self._t0 = time.monotonic()
        self.round = 0
        self.redactors: list[Callable[[Any], Any]] = []
        """What a defence withholds from recorded model output (notebook 07: the egress guard's rule)."""

    def redacted(self, value: Any) -> Any:
        """`value` (JSON-like) as the trace may keep it: every redactor applied."""
        for redactor in self.redactors:
            value = redactor(value)
        return value

    def record(
        self,
        src: Actor,
        dst: Actor,
        kind: str,
        summary: str,
        *,
        ref: str | int | None = None,
        name: str | None = None,
        payload: Any = None,
        round: int | None = None,
        **meta: Any,
    ) -> Event:
        """Append one event stamped with the next sequence number and the current round."""
        for actor in (src, dst):
            if actor not in ACTORS:
                raise ValueError(f"unknown actor {actor!r}; expected one of {ACTORS}")
        with self._lock:
            event = Event(
                seq=len(self._events) + 1,
                t=_round_time(time.monotonic() - self._t0),
                round=self.round if round is None else round,
                src=src,
                dst=dst,
                kind=str(kind),  # a `Kind` is kept as its plain string: an event is data, shown and compared as such
                summary=summary,
                ref=ref,
                name=name,
                payload=payload,
                meta={k: str(v) if isinstance(v, StrEnum) else v for k, v in meta.items() if v is not None},
            )
            self._events.append(event)
        return event

    @property
    def events(self) -> tuple[Event, ...]:
        return tuple(self._events)

    def __iter__(self) -> Iterator[Event]:
        return iter(self.events)

    def __len__(self) -> int:
        return len(self._events)

    def __getitem__(self, index: int) -> Event:
        return self._events[index]

    def of_kind(self, *kinds: str) -> list[Event]:
        """Events whose kind is one of `kinds` (a kind ending in '.' matches as a prefix)."""
        return [e for e in self._events if any(_kind_matches(e.kind, k) for k in kinds)]

    def to_json(self, indent: int | None = None) -> str:
        return json.dumps([e.to_dict() for e in self._events], indent=indent, ensure_ascii=False)

    @classmethod
    def from_json(cls, text: str) -> Trace:
        return cls([Event(**item) for item in json.loads(text)])

    def save(self, path: str | Path) -> Path:
        path = Path(path)
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(self.to_json(indent=1), encoding="utf-8")
        return path

    @classmethod
    def load(cls, path: str | Path) -> Trace:
        return cls.from_json(Path(path).read_text(encoding="utf-8"))

    def __repr__(self) -> str:
        return f"<Trace {len(self)} events, {self.round} rounds>"


def _round_time(seconds: float) -> float:
    return round(seconds, 6)


def _kind_matches(kind: str, pattern: str) -> bool:
    return kind.startswith(pattern) if pattern.endswith(".") else kind == pattern


LARGE_TEXT = 64 * 1024
"""A text longer than this (characters) is kept in the trace by reference: its size, sha256 and first characters."""
_HEAD = 200


def by_reference(payload: Any, path: str = "") -> tuple[Any, list[dict[str, Any]]]:
    """`payload` with each text over `LARGE_TEXT` replaced by a short stand-in, and one reference per text replaced.

    A reference is `{"path", "bytes", "sha256"}` (UTF-8 bytes of the whole text); the structure around the
    texts (ids, methods, `isError`, content types) stays, so the views read the frame as before.
    """
    if not path and not _has_large_text(payload):  # nearly every frame: one walk that builds nothing
        return payload, []
    if isinstance(payload, str):
        if len(payload) <= LARGE_TEXT:
            return payload, []
        data = payload.encode("utf-8", "surrogatepass")
        ref: dict[str, Any] = {"path": path, "bytes": len(data), "sha256": hashlib.sha256(data).hexdigest()}
        stand_in = (
            f"{payload[:_HEAD]}… [{ref['bytes']:,} bytes in all, kept by reference: sha256 {ref['sha256'][:16]}…]"
        )
        return stand_in, [ref]
    refs: list[dict[str, Any]] = []
    if isinstance(payload, dict):
        kept = {}
        for key, value in payload.items():
            kept[key], found = by_reference(value, f"{path}.{key}" if path else str(key))
            refs += found
        return (kept, refs) if refs else (payload, [])
    if isinstance(payload, list):
        items = []
        for index, value in enumerate(payload):
            item, found = by_reference(value, f"{path}.{index}" if path else str(index))
            items.append(item)
            refs += found
        return (items, refs) if refs else (payload, [])
    return payload, []


def _has_large_text(payload: Any) -> bool:
    pending = [payload]
    while pending:  # a loop, not recursion: this runs on every frame the taps record
        item = pending.pop()
        if isinstance(item, str):
            if len(item) > LARGE_TEXT:
                return True
        elif isinstance(item, dict):
            pending.extend(item.values())
        elif isinstance(item, list):
            pending.extend(item)
    return False
