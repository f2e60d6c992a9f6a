"""Forms from servers the host does not trust: said to be theirs, and never a way to ask for a secret."""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

from labkit._i18n import _, listing

from ..host import Guard

__all__ = ["SECRET_FIELD", "FormGuard"]

SECRET_FIELD = re.compile(
    r"pass(word|wd|phrase|code)?|token|secret|api[_ -]?key|private[_ -]?key|access[_ -]?key|credential|\bpin\b|"
    r"\botp\b|\b2fa\b|\bmfa\b|\bcvv\b|card[_ -]?number|密码|口令|令牌|密钥|秘钥|私钥|凭证|凭据|验证码",
    re.I,
)
"""A form field asking for a secret, by its name, title or description, in English or Chinese."""


class FormGuard(Guard):
    """Declines a form of an untrusted server that asks for a password, token or key, in a field's name, title or
    description, or in its message with a free-text field to type it in (notebook 07).

    The spec says servers MUST NOT ask for these in form mode; a host that shows such a form lets any server
    phish the person under the host's own frame. Trusted servers' forms are shown as they are.
    """

    def __init__(self, trusted: Callable[[str], bool]) -> None:
        self.trusted = trusted

    def on_form(self, server: str, message: str, schema: dict[str, Any]) -> str | None:
        if self.trusted(server):
            return None
        properties = schema.get("properties") or {}
        asked = [
            name for name, spec in properties.items() if any(SECRET_FIELD.search(str(t)) for t in _texts(name, spec))
        ]
        if not asked and SECRET_FIELD.search(message):
            # The message may ask for the secret and the field keep a neutral name: any free-text field then holds it.
            asked = [name for name, spec in properties.items() if _free_text(spec)]
        if not asked:
            return None
        return _(
            "the untrusted {server} server asks for a secret ({fields}); servers must not ask for passwords, "
            "API keys or tokens in a form"
        ).format(server=server, fields=listing(asked))


def _free_text(spec: Any) -> bool:
    return isinstance(spec, dict) and spec.get("type") == "string" and "enum" not in spec and "oneOf" not in spec


def _texts(name: str, spec: Any) -> list[Any]:
    return [name, *((spec.get("title", ""), spec.get("description", "")) if isinstance(spec, dict) else ())]
