"""Token estimates for text in a recorded request, offline and without a tokenizer."""

from __future__ import annotations

import math
import re

__all__ = ["ESTIMATOR", "estimate_tokens"]

ESTIMATOR = "CJK characters + ceil(other characters / 4)"
"""How tokens are estimated: each Chinese, Japanese or Korean character counts as about one token, and other
text as about four characters per token (a rule of thumb for English with GPT-style tokenizers); the total is
rounded up. It needs no tokenizer, so it works offline; it is an estimate, and real counts differ by model
(code takes more tokens per character, and a tokenizer may split or merge CJK characters). The simulated
model's `usage` counts words instead."""

# CJK radicals, punctuation, kana and ideographs; Hangul syllables; compatibility ideographs; full-width
# forms; the supplementary ideograph planes.
_CJK = re.compile("[\u2e80-\u9fff\uac00-\ud7af\uf900-\ufaff\ufe30-\ufe4f\uff00-\uffef\U00020000-\U0003ffff]")


def estimate_tokens(text: str) -> int:
    """Estimated tokens of `text`: CJK characters + ceil(other characters / 4) (see ESTIMATOR) (notebook 06)."""
    cjk = len(_CJK.findall(text))
    return cjk + math.ceil((len(text) - cjk) / 4)
