"""The Chinese edition says each thing the one way its glossary decided (locale/zh_CN/glossary.md): no rendering the
glossary turned down comes back in labkit's catalog, a lesson's catalog or a Chinese lesson's stored outputs."""

from __future__ import annotations

import re
from pathlib import Path

import nbformat
import pytest
from babel.messages.pofile import read_po

ROOT = Path(__file__).resolve().parent.parent
CATALOGS = [
    ROOT / "labkit" / "locale" / "zh_CN" / "LC_MESSAGES" / "labkit.po",
    *sorted(ROOT.glob("locale/zh_CN/[0-9]*.po")),
]
CHINESE_NOTEBOOKS = sorted(ROOT.glob("zh-CN/notebooks/[0-9]*.ipynb")) + sorted(
    ROOT.glob("zh-CN/solutions/[0-9]*.ipynb")
)

# A rendering the glossary turned down → the glossary's word for it. The README's operator tables are not a lesson
# (its "内存峰值" is a peak of memory, not the peak hour), so only labkit's and the lessons' catalogs are read.
TURNED_DOWN = {
    r"闸门|关卡": "gate → 把关",
    r"地毯式": "rug pull → 描述漂移",
    r"封装密钥|封存|封印": "sealing → 密封",
    r"线路|线上": "on the wire → 实际收发的消息 / 协议层面",
    r"回复|答复": "a response → 响应; what a user or model says back → 回答",
    r"实验室": "the lab → 本实验",
    r"峰值": "the peak hour → 高峰时段",
    r"良性": "benign → 无害",
    r"工具列表": "the tool list → 工具清单",
    r"(?<!授权)服务器": "an MCP server → 服务端 (服务器 only in 授权服务器)",
    r"(?<!（)宿主(?!应用)": "the host → Host (宿主 only in its first gloss, Host（宿主应用）)",
    r"帧": "a frame → 消息 / 请求 / 响应 / 通知",
    r"审批": "approve → 批准 / 放行 / 人工确认",
    r"洪泛": "a flood of output → 超大的结果",
    r"智能体": "agent → Agent",
    r"种子文章|源文章": "a source article → 原文 NNN",
    r"指纹": "a pin value → 锁定值",
    r"窃听器|监听器": "the tap → 记录器",
    r"日志存储": "the log store → 日志库",
    r"诚实的重试": "an honest retry → 正常重试",
    r"信息征询": "elicitation → elicitation（向用户要信息）",
    r"钉住": "pinning → 锁定",
    r"参与方|行动者": "an actor → 角色",
    r"requestState[^。；\n]{0,40}令牌|令牌[^。；\n]{0,40}requestState": "requestState → 状态 / 密文",
}


def turned_down(text: str) -> list[str]:
    """Each turned-down rendering in `text`, in its context, with the glossary's decision it breaks."""
    return [
        f"…{text[max(0, m.start() - 12) : m.end() + 12]}…: {why}"
        for pattern, why in TURNED_DOWN.items()
        for m in re.finditer(pattern, text)
    ]


def _translations(catalog: Path) -> list[str]:
    with catalog.open("rb") as handle:
        messages = read_po(handle)
    # the current messages only: an obsolete (#~) one is never shown
    return [
        text
        for message in messages
        for text in ([message.string] if isinstance(message.string, str) else message.string)
        if text
    ]


@pytest.mark.parametrize("catalog", CATALOGS, ids=lambda p: p.name)
def test_no_translation_uses_a_rendering_the_glossary_turned_down(catalog: Path) -> None:
    found = [found for text in _translations(catalog) for found in turned_down(text)]
    assert found == []


@pytest.mark.parametrize("path", CHINESE_NOTEBOOKS, ids=lambda p: str(p.relative_to(ROOT)))
def test_no_chinese_lesson_prints_a_rendering_the_glossary_turned_down(path: Path) -> None:
    """What a server or a business system says reaches the outputs without a catalog: read what was shown."""
    found = []
    for index, cell in enumerate(nbformat.read(path, as_version=4).cells):
        for output in cell.get("outputs", []):
            data = output.get("data", {})
            text = str(output.get("text") or data.get("text/plain") or "") + str(data.get("text/markdown") or "")
            found += [f"cell {index}: {why}" for why in turned_down(text)]
    assert found == []


@pytest.mark.parametrize(
    ("text", "broken"),
    [
        ("任何共享封装密钥的进程都能完成它", True),  # check 04.1 before 2026-12-04
        ("在 2026-07-28 的线路上，用户的回答放在一个新的 tools/call 里传送", True),  # check 03.1
        ("toolbox 服务器说它的工具变了", True),
        ("宿主按服务端建议的间隔轮询 tasks/get", True),
        ("重放：同样的令牌、同样的参数、同样的 requestState", True),
        ("包在它外面的程序——**Host（宿主应用）**——逐个决定", False),
        ("授权服务器把浏览器送回 Host", False),
        ("alice 的访问令牌，出示给为之签发的服务端", False),
        ("Host 把问题和工具清单发给模型，服务端返回的响应里带着密封的 requestState", False),
    ],
)
def test_the_glossary_check_finds_what_the_review_found_and_spares_the_glossarys_own_words(
    text: str, broken: bool
) -> None:
    assert bool(turned_down(text)) is broken
