"""What the person is shown of a server's form: who asks, and for a URL-mode request the page's host, apart."""

from __future__ import annotations

from typing import Any
from urllib.parse import urlsplit

from .._i18n import _

__all__ = ["url_consent"]


def url_consent(server: str, params: Any) -> tuple[str, dict[str, Any]]:
    """A URL-mode request as the host's own question: the page's host named apart from the server's words, the
    full address shown, and one box the person ticks to say they will open it themselves (notebook 07).

    The host never opens the URL: the spec says a client MUST show the target host and gather consent first.
    """
    host = urlsplit(params.url).hostname or params.url
    message = _(
        "The {server} server asks you to open a page on {host}. The host does not open it; open it "
        "yourself only if you trust {host}.\nThe server's words: {message}\nThe full address: {url}"
    ).format(server=server, host=host, message=params.message, url=params.url)
    schema = {
        "type": "object",
        "required": ["consent"],
        "properties": {
            "consent": {"type": "boolean", "title": _("I will open the page on {host} myself").format(host=host)}
        },
    }
    return message, schema
