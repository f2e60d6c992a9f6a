"""The events a view shows: chosen by actor, round and kind (notebook 00)."""

from __future__ import annotations

from collections.abc import Iterable

from ._events import Event, Trace
from ._kinds import Kind, Meta

__all__ = ["select"]


def select(
    trace: Trace | Iterable[Event],
    *,
    actors: Iterable[str] | None = None,
    rounds: Iterable[int] | None = None,
    kinds: Iterable[str] | None = None,
    http: bool = False,
) -> list[Event]:
    """Events filtered by actor (either end), round and kind prefix (notebook 00).

    HTTP-level events (status codes, MCP headers) are left out unless `http=True`, except a failed request's
    response (HTTP 4xx/5xx, notebook 09): when HTTP is where a call failed, the table shows it. A kind prefix that
    no event kind starts with is a mistake, not an empty filter: it raises `ValueError` naming the kinds it may mean.
    """
    actor_set = set(actors) if actors is not None else None
    round_set = set(rounds) if rounds is not None else None
    kind_list = list(kinds) if kinds is not None else None
    for prefix in kind_list or ():
        _check_prefix(prefix)
    return [
        e
        for e in trace
        if (http or e.meta.get(Meta.LAYER) != "http" or e.meta.get("failed"))
        and (actor_set is None or e.src in actor_set or e.dst in actor_set)
        and (round_set is None or e.round in round_set)
        and (kind_list is None or any(e.kind.startswith(k) for k in kind_list))
    ]


def _check_prefix(prefix: str) -> None:
    """`prefix` starts at least one event kind; else a message naming the kinds that contain it (08 once filtered
    on "gate", which no kind starts with, and its table silently lost the gate's row)."""
    if any(kind.startswith(prefix) for kind in Kind):
        return
    near = [str(kind) for kind in Kind if prefix.strip(".") and prefix.strip(".") in kind]
    hint = f"; did you mean {' or '.join(map(repr, near))}?" if near else ""
    raise ValueError(
        f"kinds=[{prefix!r}]: no event kind starts with {prefix!r} (kinds are prefixes like 'host.'){hint}"
    )
