"""Token estimates for text in a recorded request, offline and without a tokenizer."""

from __future__ import annotations

import math

__all__ = ["ESTIMATOR", "estimate_tokens"]

ESTIMATOR = "ceil(characters / 4)"
"""How tokens are estimated: about four characters of English per token, a rule of thumb for GPT-style
tokenizers. It needs no tokenizer, so it works offline; real counts differ by model and language
(code and Chinese take more tokens per character). The simulated model's `usage` counts words instead."""


def estimate_tokens(text: str) -> int:
    """Estimated tokens of `text`: ceil(characters / 4) (see ESTIMATOR) (notebook 06)."""
    return math.ceil(len(text) / 4)
