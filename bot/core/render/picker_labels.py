"""The words of the subscription pickers (Slack's modal, Telegram's keyboard) and of Slack's
App Home, in English and Chinese. Plain text: the platform code escapes what it sends.

`{cmd}` is the platform's command prefix ("/pr " in Slack, "/" in Telegram), `{chat}` what a
chat is called there, as in the labels table (labels.chat_words).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Final

from bot.core.models import Locale, Platform
from bot.core.render.labels import chat_words

_EN: Final[dict[str, str]] = {
    "modal_title": "Subscribe",
    "submit": "Subscribe",
    "close": "Cancel",
    "intro": "Pick what this {chat} reads and when. It adds the same subscription as typing "
    "{cmd}subscribe QUERY at CADENCE.",
    "intro_private": "Pick what you read and when: a subscription of your own, posted to our "
    "direct messages. Typing {cmd}subscribe QUERY at CADENCE does the same.",
    "tags": "Tags (reports in the last 30 days)",
    "repos": "Repos",
    "impact": "Minimum impact",
    "cadence": "When",
    "impact_high": "high",
    "impact_medium": "medium or higher",
    "impact_low": "low or higher",
    "cadence_daily 09:00": "every day at 09:00",
    "cadence_workdays 09:30": "workdays at 09:30",
    "cadence_weekly fri 17:00": "Fridays at 17:00",
    "cadence_now": "at once, as PRs arrive",
    "empty_pick": "Pick at least one tag, repo or minimum impact.",
    "nothing_to_pick": "No report arrived in the last 30 days, so there are no tags to pick "
    "yet. Type {cmd}subscribe QUERY [at CADENCE] instead.",
    "keyboard": "Tap the tags to read (✅ = picked), then when the digest should come. "
    "The same as typing {cmd}subscribe QUERY at CADENCE.",
    "home_title": "Your PR digests",
    "home_mine": "Your subscriptions",
    "home_mine_empty": "None yet. Add one here, or type /pr subscribe QUERY [at CADENCE] "
    "in our direct messages.",
    "home_line": "{number}. {query} · {cadence} · next {next}",
    "home_add": "Add a subscription",
    "home_remove": "Remove",
    "home_channels": "Channels you are in that get digests",
    "home_channels_empty": "None of the channels with digests has you in it.",
    "home_must_read": "Newest must-read PRs for your subscriptions",
    "home_must_read_empty": "No must-read PR matches your subscriptions yet.",
}

_ZH: Final[dict[str, str]] = {
    "modal_title": "订阅",
    "submit": "订阅",
    "close": "取消",
    "intro": "选择本{chat}要读的内容和推送时间。效果与输入 {cmd}subscribe 查询 at 频率 相同。",
    "intro_private": "选择你自己要读的内容和推送时间：这是你个人的订阅，推送到与机器人的私信。"
    "输入 {cmd}subscribe 查询 at 频率 效果相同。",
    "tags": "标签（最近 30 天的报告数）",
    "repos": "仓库",
    "impact": "最低影响程度",
    "cadence": "推送频率",
    "impact_high": "高",
    "impact_medium": "中及以上",
    "impact_low": "低及以上",
    "cadence_daily 09:00": "每天 09:00",
    "cadence_workdays 09:30": "工作日 09:30",
    "cadence_weekly fri 17:00": "每周五 17:00",
    "cadence_now": "立即（PR 到达时）",
    "empty_pick": "请至少选择一个标签、仓库或最低影响程度。",
    "nothing_to_pick": "最近 30 天没有新报告，暂无标签可选。请直接输入 "
    "{cmd}subscribe 查询 [at 频率]。",
    "keyboard": "点选要读的标签（✅ 表示已选），再选择推送频率。效果与输入 "
    "{cmd}subscribe 查询 at 频率 相同。",
    "home_title": "你的 PR 摘要",
    "home_mine": "你的订阅",
    "home_mine_empty": "还没有订阅。在这里添加，或在与机器人的私信中输入 "
    "/pr subscribe 查询 [at 频率]。",
    "home_line": "{number}. {query} · {cadence} · 下一次 {next}",
    "home_add": "添加订阅",
    "home_remove": "取消订阅",
    "home_channels": "你所在的、有摘要推送的频道",
    "home_channels_empty": "有摘要推送的频道里都没有你。",
    "home_must_read": "与你的订阅匹配的最新精读 PR",
    "home_must_read_empty": "暂时没有与你的订阅匹配的精读 PR。",
}

_TABLES: Final[Mapping[Locale, Mapping[str, str]]] = {Locale.EN: _EN, Locale.ZH: _ZH}


def picker_keys() -> frozenset[str]:
    """Every key, the same in every locale (a test checks it)."""
    return frozenset(_EN)


def picker_label(key: str, locale: Locale, platform: Platform | None = None, **params: str) -> str:
    """The words for `key` in `locale`, with the platform's `{cmd}` and `{chat}` filled in."""
    template = _TABLES[Locale(locale)][key]
    return template.format_map({**chat_words(platform, Locale(locale)), **params})
