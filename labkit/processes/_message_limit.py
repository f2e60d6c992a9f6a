"""The most a stdio server may send in one message; a longer line ends its connection with an error naming the sizes."""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import Any

from .._i18n import _
from ..errors import ConfigError, LabError
from ..server_contract import MAX_RESULT_BYTES_ENV

__all__ = ["DEFAULT_MAX_RESULT_BYTES", "MAX_RESULT_BYTES_ENV", "ServerMessageTooLarge", "max_message_bytes"]

DEFAULT_MAX_RESULT_BYTES = 4 * 1024 * 1024
"""The lab's servers cap a tool result at this (`servers/_wiring.py`); the host lets that much through."""
_ENVELOPE_BYTES = 64 * 1024  # the JSON-RPC message around a result of exactly the cap


def max_message_bytes(env: Mapping[str, str] = os.environ) -> int:
    """The longest line read from a stdio server: `LABKIT_MAX_RESULT_BYTES` (4 MiB) plus the envelope (notebook 05)."""
    raw = env.get(MAX_RESULT_BYTES_ENV, "")
    if not raw:
        return DEFAULT_MAX_RESULT_BYTES + _ENVELOPE_BYTES
    if not raw.isdigit() or int(raw) == 0:
        raise ConfigError(
            _("{env} must be a whole number of bytes above 0, not {raw!r}").format(env=MAX_RESULT_BYTES_ENV, raw=raw)
        )
    return int(raw) + _ENVELOPE_BYTES


class ServerMessageTooLarge(LabError, RuntimeError):
    """The stdio server in `server` sent a message of `size` bytes (`whole`: its end was seen), over `limit`.

    Its supervisor stopped passing it on and ended the server, so the host never holds the message (notebook 05).
    """

    def __init__(self, server: str, size: int, limit: int, whole: bool) -> None:
        self.server, self.size, self.limit, self.whole = server, size, limit, whole
        super().__init__(self.account())

    @classmethod
    def from_status(cls, server: str, cut: Mapping[str, Any]) -> ServerMessageTooLarge:
        return cls(server, cut["bytes"], cut["limit"], cut["whole"])

    @property
    def shown_size(self) -> str:
        """The size as the learner reads it: exact when the line's end was seen."""
        size = f"{self.size:,}"
        return size if self.whole else _("at least {size}").format(size=size)

    def account(self) -> str:
        return _(
            "The {server} server sent a message of {size} bytes, over the host's limit of {limit} bytes ({env}); "
            "the host ended that connection."
        ).format(server=self.server, size=self.shown_size, limit=f"{self.limit:,}", env=MAX_RESULT_BYTES_ENV)
