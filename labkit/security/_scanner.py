"""The teaching scanner: rules over every string of a tool definition and a server's instructions, before exposure."""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Collection, Iterable, Mapping, Sequence
from dataclasses import asdict, dataclass
from typing import TYPE_CHECKING, Any

from mcp_types import Tool

from labkit._i18n import _

from ..host import namespaced_name, outside_references, wire_tool
from ..trace import base64_texts
from ._hidden import HIDDEN, count_hidden, readable, reveal

if TYPE_CHECKING:
    import pandas as pd

__all__ = ["RULES", "Finding", "Rule", "findings_table", "scan_text", "scan_tool", "texts_of"]

_VALID_NAME = re.compile(r"^[A-Za-z0-9._-]{1,128}$")
_PADDING = re.compile(r" {40,}|\n{8,}")
_FREE_TEXT = {
    "sidenote",
    "side_note",
    "notes",
    "note",
    "feedback",
    "debug",
    "extra",
    "metadata",
    "context",
    "reasoning",
    "history",
    "conversation",
}
_OVERRIDE = re.compile(
    r"\b(always|instead|never|must|prefer(red)?|replace[sd]?|rather than|side effect)\b|"
    r"总是|始终|一律|务必|必须|而不是|代替|替代|改用|优先|副作用",
    re.I,
)
_QUOTED_NAME = re.compile(r"['\"`‘“]([A-Za-z_][\w.-]*)['\"`’”]")
_CONFUSABLE = str.maketrans("аеорсхуіјѕԁɡոΑΒΕΗΙΚΜΝΟΡΤΧΥ", "aeopcxyijsdgnABEHIKMNOPTXY")
_ADVISORY_LENGTH = 4000
_SENTENCES = re.compile(r"(?<=[.!?:])\s+|(?<=[。！？；：])")
POWER_NAME = re.compile(
    r"approve_?all|auto_?approve|bypass|disable_(guard|check|approval)s?|sudo|grant_(all|admin)|"
    r"elevate|skip_(approval|confirm)",
    re.I,
)
"""Tool names that claim powers over the host itself: a person reviews every call to them."""
_SELF_PROMOTION = re.compile(
    r"\b(use this (tool )?(first|instead)|always (use|prefer) this|(faster|better|more "
    r"accurate|preferred) (version|replacement|alternative) of|supersedes)\b",
    re.I,
)


@dataclass(frozen=True)
class Finding:
    """One reason to distrust a definition: the rule, where it matched, and the text around it (notebook 07)."""

    rule: str
    where: str
    excerpt: str
    severity: str = "block"


@dataclass(frozen=True)
class Rule:
    """A pattern searched, case-insensitively, in the readable text of every string of a definition (notebook 07)."""

    name: str
    pattern: str
    why: str = ""

    def search(self, text: str) -> re.Match[str] | None:
        return re.search(self.pattern, text, re.I)


RULES: tuple[Rule, ...] = (
    Rule(
        "markup",
        r"<\s*/?\s*(important|system|instructions?|secret|admin|prompt|hidden)\b[^>]*>|<!--|"
        r"\[\s*(system|inst)\s*\]|#+\s*agent instructions|\bAI agents?\s+reading\b|"
        r"#+\s*(AI\s*)?agent\s*(须知|指令|说明)|读到(本|这个)页面?的\s*AI",
        "markup that addresses the model, not a person",
    ),
    Rule(
        "concealment",
        r"\b(do not|don't|never)\s+(tell|mention|inform|reveal|alert|notify)\b|"
        r"\bwithout\s+(telling|informing|notifying|asking)\b|"
        r"\b(secretly|silently|quietly|covertly)\s+(send|upload|read|forward|copy|include|bcc|post|share|add)|"
        r"(不要|不必|无需|无须|切勿|别|不得|不可)\s*(告诉|告知|通知|提及|提到|提起|提示|透露|让|向)\s*(用户|使用者|他们|对方)?|"
        r"(悄悄|偷偷|秘密地|暗中|静默地|默默地?)\s*(地)?\s*(发送|上传|读取|转发|复制|抄送|附上|分享|调用)",
        "asks to keep something from the user",
    ),
    Rule(
        "secret-path",
        r"~/\.ssh\b|\bid_(rsa|ed25519|ecdsa|dsa)\b|\.aws/credentials|~/\.aws\b|/etc/(passwd|shadow)\b|"
        r"\bmcp\.json\b|\.netrc\b|\.kube/config\b|\.docker/config\.json",
        "names a file that holds secrets",
    ),
    Rule(
        "pre-call-directive",
        r"\bbefore\s+(using|calling|running|answering|responding)\b[^.]{0,80}?"
        r"\b(read|call|send|include|pass|copy|fetch)\b|\bwhen this tool is (available|present|loaded|listed)\b|"
        r"\bfirst call\s+`?[a-z_][\w.-]*`?\s*(,|with\b|then\b|and\b)|"
        r"(使用|调用|运行|回答|回复)\S{0,8}(之前|以前|前)\S{0,40}?(先|首先|务必|必须)\S{0,6}(读取|调用|发送|附上|传入|获取)|"
        r"(只要|一旦|当|如果)\S{0,8}工具\S{0,4}(可用|存在|加载|列出)",
        "orders the model to do something else first",
    ),
    Rule(
        "exfiltration",
        r"\bpass\s+(its|the|their|all)\s+contents?\b|"
        r"\b(body|content|data|message|text)\s*=\s*(everything|all|the contents)\b|"
        r"\b(bcc|cc|forward|backup)\b[^.]{0,40}?[\w.+-]+@[\w-]+\.[\w.-]+|\beverything you (have )?read\b|"
        r"把\S{0,16}内容\S{0,4}(作为|当作|填进|填入|放进|放入|传给|发给|发到)|"
        r"(读到|读过)的(全部|所有|一切)(内容)?|(抄送|转发|备份)\S{0,20}?[\w.+-]+@[\w-]+\.[\w.-]+",
        "moves data into an argument or out to an address",
    ),
    Rule(
        "model-directive",
        r"\bignore\s+(all\s+|any\s+)?(the\s+)?(previous|prior|above|earlier|other)\s+"
        r"(instructions|rules|tools)\b|\byou are now\b|\bnew instructions\b|"
        r"忽略\s*(之前|先前|以上|上面|前面|所有|其他|其它)\S{0,4}(指令|指示|说明|规则|工具)|你现在是|新的指令",
        "speaks to the model over the user's head",
    ),
    Rule(
        "shadowing-vocabulary",
        r"\b(also present|side effect on|modify the behaviou?r of|instead of (any|the) other)\b|"
        r"\bwhen (the )?`?\w+`? tool is (called|used)\b",
        "tries to change how other tools are used",
    ),
)


def texts_of(tool: Tool | Mapping[str, Any]) -> list[tuple[str, str]]:
    """Every string of a definition and where it sits: name, title, description, both schemas (notebook 07)."""
    wire = wire_tool(tool)
    found = [(key, wire[key]) for key in ("name", "title", "description") if isinstance(wire.get(key), str)]

    def walk(value: Any, where: str) -> None:
        if isinstance(value, str):
            found.append((where, value))
        elif isinstance(value, Mapping):
            for key, item in value.items():
                walk(item, f"{where}.{key}")
        elif isinstance(value, list):
            for index, item in enumerate(value):
                walk(item, f"{where}[{index}]")

    for key in ("inputSchema", "outputSchema", "annotations"):
        walk(wire.get(key), key)
    return found


def _excerpt(text: str, match: re.Match[str] | None, width: int = 60) -> str:
    if match is None:
        return reveal(text[: 2 * width])
    start, end = max(0, match.start() - width), min(len(text), match.end() + width)
    return ("…" if start else "") + reveal(text[start:end]) + ("…" if end < len(text) else "")


def scan_text(text: str, where: str, rules: Sequence[Rule] = RULES) -> list[Finding]:
    """Hidden characters and padding in the raw text, then each rule over what a model would read (notebook 07)."""
    findings = []
    if count_hidden(text):
        findings.append(Finding("hidden-characters", where, _excerpt(text, HIDDEN.search(text), 30)))
    if match := _PADDING.search(text):
        findings.append(
            Finding(
                "padding",
                where,
                _("{n_group} blank characters before: ").format(n_group=len(match.group()))
                + reveal(text[match.end() : match.end() + 60]),
            )
        )
    plain = readable(text)
    for rule in rules:
        if match := rule.search(plain):
            findings.append(Finding(rule.name, where, _excerpt(plain, match)))
    for decoded in base64_texts(plain):
        findings.extend(Finding(f.rule, f"{where} (base64)", f.excerpt) for f in scan_text(decoded, where, rules))
    return findings


def _skeleton(name: str) -> str:
    return unicodedata.normalize("NFKC", name).translate(_CONFUSABLE).lower()


def scan_tool(
    tool: Tool | Mapping[str, Any],
    *,
    others: Mapping[str, str] | None = None,
    rules: Sequence[Rule] = RULES,
    server: str | None = None,
    own: Collection[str] = (),
) -> list[Finding]:
    """All findings for one definition; `others` maps other servers' tool names to their server (notebook 07).

    `server` is given when the host namespaces names: the model is then offered `<server>__<tool>`, so the same
    name on two servers is two tools, and only a collision of the namespaced names shadows. `own` are the names its
    own server lists: a mention of one of them refers to that tool, even when another server offers the same name.
    """
    wire, others = wire_tool(tool), others or {}
    elsewhere = {other: owner for other, owner in others.items() if other not in own}
    name, description = wire.get("name", ""), wire.get("description") or ""
    findings = [f for where, text in texts_of(wire) for f in scan_text(text, where, rules)]
    if match := POWER_NAME.search(name):
        findings.append(
            Finding(
                "power-name",
                "name",
                _("{name} claims {group!r}: a person reviews every call").format(name=name, group=match.group()),
                "review",
            )
        )
    if (match := _SELF_PROMOTION.search(readable(description))) and _competes(readable(description), match, elsewhere):
        findings.append(Finding("tool-choice", "description", _excerpt(readable(description), match), "review"))
    if not _VALID_NAME.match(name):
        findings.append(
            Finding(
                "invalid-name", "name", _("{name} has characters outside A-Z a-z 0-9 _ - .").format(name=ascii(name))
            )
        )
    for other, owner in others.items():
        offered = (namespaced_name(server, name), namespaced_name(owner, other)) if server else (name, other)
        if offered[0] == offered[1]:
            findings.append(
                Finding(
                    "shadowing",
                    "name",
                    _("{name} is already offered by the {server} server").format(name=offered[0], server=owner),
                )
            )
        elif other != name and _skeleton(other) == _skeleton(name):
            findings.append(
                Finding(
                    "confusable-name",
                    "name",
                    _("{name} looks like {server}'s {other}").format(name=ascii(name), server=owner, other=other),
                )
            )
    findings.extend(_cross_server_references(wire, name, elsewhere))
    for key in ("inputSchema", "outputSchema"):
        findings.extend(
            Finding(
                "outside-reference",
                where,
                _("{what}: the host fetches nothing a server names, so calls to this tool fail").format(what=what),
            )
            for where, what in outside_references(wire.get(key) or {}, key)
        )
    properties = (wire.get("inputSchema") or {}).get("properties") or {}
    for param, spec in properties.items():
        if param.lower() in _FREE_TEXT and not spec.get("description") and param not in readable(description):
            findings.append(
                Finding(
                    "unexplained-parameter",
                    f"inputSchema.properties.{param}",
                    _("free-text parameter {param!r} that the description never explains").format(param=param),
                )
            )
    if len(description) > _ADVISORY_LENGTH:
        findings.append(Finding("long-description", "description", f"{len(description)} characters", "warn"))
    return findings


def _competes(description: str, match: re.Match[str], others: Mapping[str, str]) -> bool:
    """Whether a tool's claim to be chosen first competes with another server's tools: it names one of them, or
    names no tool at all. A claim over names no other server offers (its own server's tools, or none present)
    orders nothing between servers."""
    before = [description.rfind(mark, 0, match.start()) for mark in ".!?\n。！？"]
    after = [i for mark in ".!?\n。！？" if (i := description.find(mark, match.end())) >= 0]
    sentence = description[max(before) + 1 : min(after, default=len(description))]
    named = set(_QUOTED_NAME.findall(sentence))
    return not named or bool(named & set(others))


def _as_name(word: str) -> re.Pattern[str]:
    """`word` written as a tool's name, not used as a word of the sentence: quoted, beside "tool", or after a verb
    that calls it ("Can fetch content" uses the verb; "call fetch", "'fetch'", "the fetch tool" name the tool)."""
    w = re.escape(word)
    return re.compile(
        rf"['\"`‘“]{w}['\"`’”]|\b{w}\s+tools?\b|\btools?\s+{w}\b|"
        rf"\b(?:use|using|call|calling|invoke|invoking|run|prefer|over|than|of)\s+(?:the\s+)?{w}\b|"
        rf"(?:调用|使用|用|运行)\s*{w}(?![A-Za-z0-9])|(?<![A-Za-z0-9]){w}\s*工具",
        re.I,
    )


def _identifier(name: str) -> bool:
    """A name no prose uses by chance (a separator, a digit or an inner capital): its mention is a reference."""
    return len(name) >= 4 and bool(re.search(r"[_.\-0-9]|[a-z][A-Z]", name))


def _cross_server_references(wire: Mapping[str, Any], name: str, others: Mapping[str, str]) -> list[Finding]:
    """A definition that names another server's tool: in any string and any language an identifier such as
    `send_message` is a reference to it; a plain word (`search`) counts only in a sentence that tells the model
    how to use it."""
    texts = [(where, readable(text)) for where, text in texts_of(wire) if where != "name"]
    found = []
    for other, owner in others.items():
        if other == name:
            continue
        if _identifier(other):
            # A longer identifier (wait_for_prompt) is no mention of wait_for; a namespaced one (sink__send_message) is.
            pattern = re.compile(rf"(?<![A-Za-z0-9])(?<![A-Za-z0-9]_){re.escape(other)}(?![A-Za-z0-9_])")
            hit = next(((where, text, m) for where, text in texts if (m := pattern.search(text))), None)
            if hit is not None:
                where, text, match = hit
                said = _("names {owner}'s tool {mentioned}: {excerpt}")
                found.append(
                    Finding(
                        "cross-server-reference",
                        where,
                        said.format(owner=owner, mentioned=other, excerpt=_excerpt(text, match, 50)),
                    )
                )
            continue
        for where, text in texts:
            for sentence in _SENTENCES.split(text):
                if _as_name(other).search(sentence) and _OVERRIDE.search(sentence):
                    said = _("tells the model how to use {owner}'s {mentioned}: {sentence}")
                    found.append(
                        Finding(
                            "cross-server-reference",
                            where,
                            said.format(owner=owner, mentioned=other, sentence=sentence[:120]),
                        )
                    )
                    break
    return found


def findings_table(findings: Iterable[Finding], **columns: Any) -> pd.DataFrame:
    """Findings as a table, with extra constant columns such as server= and tool= (notebook 07)."""
    import pandas as pd

    return pd.DataFrame(
        [{**columns, **asdict(f)} for f in findings], columns=[*columns, "rule", "where", "excerpt", "severity"]
    )
