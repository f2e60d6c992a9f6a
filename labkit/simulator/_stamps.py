"""Deterministic stamps for simulated responses: ids hashed from the request, a fixed clock, fake token counts."""

from __future__ import annotations

import hashlib
import json
from typing import Any

from ..trace import SIMULATED_MODEL

__all__ = ["CREATED", "MODEL_NAME", "digest", "make_id", "token_count"]

MODEL_NAME = SIMULATED_MODEL
CREATED = 1793322000  # the lab's fixed clock: 2026-10-30 09:00 +08:00


def digest(body: Any) -> str:
    """A stable hash of a request body, whatever order its keys were sent in (notebook 01)."""
    return hashlib.sha256(json.dumps(body, sort_keys=True, ensure_ascii=False).encode()).hexdigest()


def make_id(prefix: str, seed: str, *parts: object) -> str:
    """`prefix` + 24 hex digits derived from the request, so two identical runs give identical ids (notebook 01)."""
    return prefix + hashlib.sha256("/".join([seed, prefix, *map(str, parts)]).encode()).hexdigest()[:24]


def token_count(value: Any) -> int:
    """A fake token count (words in the JSON); the simulator has no tokenizer and says so (notebook 01)."""
    return max(1, len(json.dumps(value, ensure_ascii=False).split()))
