"""Word handling for the rule-based policy: tokens, crude English stems, stop words, a few Chinese words."""

from __future__ import annotations

import re

__all__ = ["content_words", "name_words", "stem"]

_STOP_WORDS = frozenset(
    """a an and are as at be by can could did do does for from get give has have how i in is it its me
    my of on or please show tell than that the their then there this to use used was what when where
    which who why will with would you your""".split()
)
_WORD = re.compile(r"[A-Za-z][A-Za-z0-9]*")
_CAMEL = re.compile(r"(?<=[a-z0-9])(?=[A-Z])")
# Chinese has no spaces between words: the simulated model reads it through the words tools are named with,
# each Chinese word meaning the English stems a tool's name or description uses for it. Deliberately small,
# like the stems: a real model reads any language.
_CHINESE_WORDS = {
    "读": ("read",),
    "读取": ("read",),
    "打开": ("read", "open"),
    "文件": ("file",),
    "笔记": ("note",),
    "目录": ("folder", "list"),
    "列出": ("list",),
    "写入": ("write",),
    "保存": ("save",),
    "发送": ("send",),
    "发给": ("send",),
    "发一条": ("send",),
    "消息": ("message",),
    "邮件": ("message", "mail"),
    "搜索": ("search",),
    "查找": ("search", "find"),
    "文档": ("doc", "documentation"),
    "报错": ("error",),
    "错误": ("error",),
    "日志": ("log",),
    "查询": ("query",),
    "图表": ("chart",),
    "趋势": ("trend",),
    "相加": ("add", "sum"),
    "加起来": ("add", "sum"),
    "求和": ("add", "sum"),
    "趣闻": ("fact",),
    "冷知识": ("fact",),
    "今天": ("today", "day"),
    "每日": ("day",),
    "订单": ("order",),
    "计划": ("plan",),
    "总结": ("summarise",),
    "翻译": ("translate",),
    "环境": ("environment",),
}
_CHINESE = re.compile("|".join(sorted(map(re.escape, _CHINESE_WORDS), key=len, reverse=True)))


def stem(word: str) -> str:
    """A deliberately crude English stem ("errors" → "error", "charts" → "chart") (notebook 01)."""
    word = word.lower()
    if len(word) > 4 and word.endswith("ies"):
        return word[:-3] + "y"
    if len(word) > 3 and word.endswith("s") and not word.endswith("ss"):
        return word[:-1]
    return word


def content_words(text: str) -> set[str]:
    """The stems of the words in `text` that carry meaning (no stop words), Chinese ones as the English stems a
    tool would use for them ("报错" → "error") (notebook 01)."""
    english = {stem(w) for w in _WORD.findall(_CAMEL.sub(" ", text or "")) if w.lower() not in _STOP_WORDS}
    return english | {s for word in _CHINESE.findall(text or "") for s in _CHINESE_WORDS[word]}


def name_words(name: str) -> set[str]:
    """The words inside an identifier: `logs__query_errors` → {"log", "query", "error"} (notebook 01)."""
    return content_words(re.sub(r"[._\-]+", " ", name))
