"""The simulated model's final answer: sentences written from the structured results it was given."""

from __future__ import annotations

import re
from datetime import datetime
from typing import Any

from labkit._i18n import _, clauses, ngettext

from ._dialogue import Dialogue, ToolOutcome, ToolSeen
from ._quoting import cut, failed, in_words, join_sentences, json_of, quote_chart, quote_query

__all__ = ["answer_results", "describe", "sentences"]

_ISO_WEEK = re.compile(r"\b(\d{4})-W(\d{2})\b")


def _offset(moment: datetime) -> str:
    raw = moment.strftime("%z") or "+0000"
    return f"{raw[:3]}:{raw[3:]}"


def _moment(data: dict[str, Any]) -> datetime | None:
    try:
        return datetime.fromisoformat(str(data.get("datetime")))
    except ValueError:
        return None


def _time_sentence(data: dict[str, Any]) -> str | None:
    moment = _moment(data)
    if moment is None:
        return None
    return _("It is {clock} in {zone} (UTC{offset}).").format(
        clock=moment.strftime("%H:%M"), zone=data["timezone"], offset=_offset(moment)
    )


def _conversion_sentence(data: dict[str, Any]) -> str | None:
    source, target = _moment(data["source"]), _moment(data["target"])
    if source is None or target is None:
        return None
    return _(
        "{source_clock} in {source_zone} (UTC{source_offset}) is {target_clock} on {target_day} in "
        "{target_zone} (UTC{target_offset}), a difference of {difference}."
    ).format(
        source_clock=source.strftime("%H:%M"),
        source_zone=data["source"].get("timezone"),
        source_offset=_offset(source),
        target_clock=target.strftime("%H:%M"),
        target_day=data["target"].get("day_of_week", target.strftime("%A")),
        target_zone=data["target"].get("timezone"),
        target_offset=_offset(target),
        difference=data.get("time_difference", "?"),
    )


def _plan_sentence(data: dict[str, Any]) -> str:
    sentence = _("Your {plan} plan allows up to {count} accounts.").format(
        plan=data["plan"], count=data["max_accounts"]
    )
    if isinstance(data.get("monthly_price_cny"), (int, float)):
        return join_sentences(
            [sentence, _("It costs {price:.2f} CNY a month.").format(price=data["monthly_price_cny"])]
        )
    return sentence


def _week_of(order: dict[str, Any]) -> tuple[int, int]:
    """The ISO (year, week) an order was created in; (0, 0) when its time is unreadable."""
    try:
        year, week, _day = datetime.fromisoformat(str(order.get("created_at"))).isocalendar()
    except ValueError:
        return (0, 0)
    return (year, week)


def _orders_sentence(lists: list[dict[str, Any]], question: str) -> str:
    """Counts and amounts per status, for the ISO week the question names (all returned orders if none)."""
    named = _ISO_WEEK.search(question)
    week = (int(named.group(1)), int(named.group(2))) if named else None
    parts, caveats = [], []
    for listing in lists:
        orders = [o for o in listing["orders"] if isinstance(o, dict)]
        chosen = [o for o in orders if _week_of(o) == week] if week else orders
        amount = sum(float(o.get("amount_cny") or 0) for o in chosen)
        parts.append(
            ngettext(
                "{count} {status} order worth {amount:.2f} CNY",
                "{count} {status} orders worth {amount:.2f} CNY",
                len(chosen),
            ).format(count=len(chosen), status=listing["status"], amount=amount)
        )
        # Newest first: a list that stops before the week began holds the whole week.
        whole_week = week is not None and bool(orders) and _week_of(orders[-1]) < week
        if "limit" in listing and len(orders) >= listing["limit"] and not whole_week:
            caveats.append(
                _("the tool returned at most {limit} {status} orders, so there may be more").format(
                    limit=listing["limit"], status=listing["status"]
                )
            )
    head = (
        _("In {week}: {parts}.").format(week=named.group(), parts=clauses(parts))
        if named
        else _("Among the newest orders returned: {parts}.").format(parts=clauses(parts))
    )
    return head + ("" if not caveats else " " + _("Note: {caveats}.").format(caveats=clauses(caveats)))


def describe(name: str, outcome: ToolOutcome, arguments: dict[str, Any]) -> str:
    """One result in a sentence, read from its fields; a tool the model does not know gets its fields in words."""
    if failed(outcome):
        return _("`{name}` reported an error: {reason}").format(name=name, reason=cut(outcome.text.splitlines()[0]))
    data = json_of(outcome.text)
    if not isinstance(data, (dict, list)):
        return _("`{name}` said: {text}").format(name=name, text=cut(outcome.text))
    if isinstance(data, dict):
        sentence = _known(name, data, outcome, arguments)
        if sentence:
            return sentence
    return in_words(f"`{name}`", data)


def _known(name: str, data: dict[str, Any], outcome: ToolOutcome, arguments: dict[str, Any]) -> str | None:
    if "plan" in data and "max_accounts" in data:
        return _plan_sentence(data)
    if "timezone" in data and "datetime" in data:
        return _time_sentence(data)
    if isinstance(data.get("source"), dict) and isinstance(data.get("target"), dict):
        return _conversion_sentence(data)
    if "path" in data and "points" in data:
        return quote_chart(outcome)
    if "total" in data and "top_errors" in data:
        return quote_query(outcome, str(arguments.get("service", "")), str(arguments.get("since", "")))
    if list(data) == ["result"] and isinstance(data["result"], str):
        return _("`{name}` said: {text}").format(name=name, text=cut(data["result"]))
    return None


def _is_order_list(data: Any) -> bool:
    return isinstance(data, dict) and isinstance(data.get("orders"), list) and "status" in data


def answer_results(dialogue: Dialogue, *, since_question: bool = False) -> str:
    """The final answer to the last turn's results, or to every result since the user's question when the calls came
    one per turn (parallel tool use off): one sentence per result, order lists added up (notebook 01)."""
    last = dialogue.last
    assert last is not None
    asked = max((i for i, m in enumerate(dialogue.messages) if m.role == "user" and m.text), default=-1)
    turns = dialogue.messages[asked + 1 :] if since_question else [last]
    results = [r for m in turns for r in m.results]
    calls = {c.id: c for m in dialogue.messages for c in m.calls}
    answered = [(calls[r.call_id], r) for r in results if r.call_id in calls]
    unpaired = [r for r in results if r.call_id not in calls]
    return join_sentences(
        [sentences(answered, " ".join(dialogue.user_texts))]
        + [describe(dialogue.call_name(r.call_id), r, {}) for r in unpaired]
    )


def sentences(answered: list[tuple[ToolSeen, ToolOutcome]], question: str) -> str:
    """Each call's result in a sentence; lists of orders are added up per status for the week asked (notebook 06)."""
    said: list[str] = []
    order_lists: list[Any] = []
    for call, result in answered:
        data = None if failed(result) else json_of(result.text)
        if _is_order_list(data):
            order_lists.append(data)
        else:
            said.append(describe(call.name, result, call.arguments))
    if order_lists:
        said.append(_orders_sentence(order_lists, question))
    return join_sentences(said)
