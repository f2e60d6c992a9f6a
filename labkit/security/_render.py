"""The delivered answer is safe to render: a link or image reaches the page only when its host is one the user
allowed; every other one is shown as text naming its host, and the trace says what was removed."""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from dataclasses import asdict, dataclass
from urllib.parse import urlsplit

from labkit._i18n import _, listing

from ..host import Guard
from ..trace import Kind, Outcome, Trace

__all__ = ["SafeAnswer", "neutralise"]

_CHARS = r"[^\s<>()\"'`\]]"
_URL = rf"(?:[A-Za-z][A-Za-z0-9+.-]*:|//)(?:{_CHARS}|\([^\s()]*\))+"
# Each form a Markdown or HTML renderer turns into a request or a click; checked in this order, each on what the
# forms before it left.
_FORMS: tuple[tuple[str, re.Pattern[str]], ...] = (
    ("image", re.compile(rf"!\[(?P<text>[^\]]*)\]\(\s*<?(?P<url>{_URL})>?(?:\s+[\"'(][^)]*)?\s*\)")),
    ("link", re.compile(rf"\[(?P<text>[^\]]*)\]\(\s*<?(?P<url>{_URL})>?(?:\s+[\"'(][^)]*)?\s*\)")),
    ("reference", re.compile(rf"^[ ]{{0,3}}\[(?P<text>[^\]]+)\]:\s*<?(?P<url>{_URL})>?.*$", re.M)),
    (
        "html",
        re.compile(
            rf"<(?P<text>[a-z]+)\b[^>]*?\b(?:src|href|srcset|action|data)\s*=\s*[\"']?(?P<url>{_URL})[^>]*>", re.I
        ),
    ),
    ("autolink", re.compile(rf"<(?P<text>)(?P<url>{_URL})>")),
    ("address", re.compile(rf"(?P<text>)(?P<url>(?:https?|ftp)://{_CHARS}+|(?<![\w.`/])www\.{_CHARS}+)", re.I)),
)


def allowed_host(host: str, allowed: Iterable[str]) -> bool:
    """`host` is one of `allowed` or under one of them (`a.shop.example` under `shop.example`) (notebook 07)."""
    host = host.lower().rstrip(".")
    return any(host == a or host.endswith("." + a) for a in (a.lower().rstrip(".") for a in allowed if a))


def _host(url: str) -> str:
    if url.lower().startswith("www."):
        url = "//" + url
    parts = urlsplit(url)
    if parts.scheme and parts.scheme.lower() not in ("http", "https", "ftp", "mailto") and not parts.netloc:
        return parts.scheme.lower() + ":"  # javascript:, data:, file:… have no host a user could have allowed
    if parts.scheme.lower() == "mailto":
        return parts.path.rpartition("@")[2].lower()
    return (parts.hostname or "").lower()


@dataclass(frozen=True)
class Removed:
    """One link or image taken out of the answer: its form, host, and the address it pointed at (notebook 07)."""

    form: str
    host: str
    url: str


class SafeAnswer(Guard):
    """Neutralises every link and image in the delivered answer whose host the user did not allow (notebook 07).

    Allowed are `allowed` (the user's own), hosts in the user's question, and hosts a trusted server's result
    named. Where the others came from plays no part: an image the model built from an untrusted result's
    order carries data in its address whether or not the result showed that address whole.
    """

    def __init__(self, trace: Trace, trusted: Callable[[str], bool], allowed: Iterable[str] = ()) -> None:
        self.trace, self.trusted = trace, trusted
        self.allowed = {a.lower() for a in allowed}
        self.vouched: set[str] = set()

    def on_result(self, server: str, name: str, text: str, is_error: bool) -> str:
        if self.trusted(server):
            self.vouched |= _hosts(text)
        return text

    def hosts(self) -> set[str]:
        """The hosts the answer may link to now."""
        asked = {h for e in self.trace.of_kind(Kind.USER_ASK) for h in _hosts(str((e.payload or {}).get("text", "")))}
        return self.allowed | self.vouched | asked

    def on_deliver(self, answer: str) -> str:
        safe, removed = neutralise(answer, self.hosts())
        if removed:
            self.trace.record(
                "host",
                "host",
                Kind.HOST_SANITIZE,
                _("removed {n} link(s) or image(s) to hosts the user did not allow from the answer: {hosts}").format(
                    n=len(removed), hosts=listing(sorted({r.host for r in removed}))
                ),
                outcome=Outcome.WITHHELD,
                by=self.name,
                payload=self.trace.redacted([asdict(r) for r in removed]),
            )
        return safe


def _hosts(text: str) -> set[str]:
    return {host for _form, pattern in _FORMS for m in pattern.finditer(text) if (host := _host(m["url"]))}


def neutralise(text: str, allowed: Iterable[str]) -> tuple[str, list[Removed]]:
    """`text` with every link and image to a host outside `allowed` shown as text naming its host, and what was
    removed (notebook 07)."""
    allowed = tuple(allowed)
    removed: list[Removed] = []
    for form, pattern in _FORMS:

        def replace(match: re.Match[str], form: str = form) -> str:
            host = _host(match["url"])
            if host and allowed_host(host, allowed):
                return match.group()
            removed.append(Removed(form, host or "?", match["url"]))
            said = match["text"] if form in ("image", "link", "reference") else ""
            what = _("image") if form == "image" else _("link")
            note = _("[{what} to `{host}` removed by the host]").format(what=what, host=host or "?")
            return f"{said} {note}".strip() if said else note

        text = pattern.sub(replace, text)
    return text, removed
