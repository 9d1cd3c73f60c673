"""The words the bot itself says, in `zh` and `en`; report text is never translated.

Templates read labels through `labels(locale)`; small bot messages ("not found", usage) are
`notice_text(key, locale, params)`. Placeholders use `str.format` names (`{ref}`, `{n}`).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Final

from bot.core.models import Locale, Platform
from bot.core.render.notices import ERROR_TEXTS, ERROR_WORDS, NOTICES

_ZH: dict[str, str] = {
    "tag_view": "标签视图",
    "untitled": "PR 摘要",  # a digest title when no title, repo or name fits
    "not_yet": "尚未推送",  # a subscription's last digest, before its first
    "first_digest_line": " · 首期：{since} 以来的报告",
    "colon": "：",
    "prs": "{n} 个 PR",
    "prs_one": "{n} 个 PR",
    "high_impact": "{n} 个高影响",
    "top_flags": "高频风险",
    "impact": "影响",
    "impact_high": "高",
    "impact_medium": "中",
    "impact_low": "低",
    "result_impact": "（{label}：{level}）",
    "updated": "更新",
    "matched": "匹配",
    "posted": "已于 {time} 推送",
    "must_read": "★",
    "more": "还有 {n} 个 PR 未列出",
    "other": "其他",
    "empty_digest": "这段时间没有新的 PR。",
    "button_risks": "风险",
    "button_files": "文件",
    "continued": "续",
    "section_empty": "这份报告没有「{section}」部分。",
    "one_liner": "一句话",
    "recommendation": "推荐动作",
    "impact_level": "影响程度",
    "risk_flags": "风险标记",
    "risks_text": "风险",
    "impact_text": "影响",
    "tags": "标签",
    "merged_at": "合并时间",
    "link": "原文链接",
    "github_link": "GitHub",
    "key_symbols": "关键符号",
    "module": "模块",
    "category": "类别",
    "kind": "类型",
    "symbols": "符号",
    "section_summary": "执行摘要",
    "section_risks": "风险与影响",
    "section_files": "关键文件",
    "section_related": "关联脉络",
    "section_motivation": "功能与动机",
    "section_impl": "实现拆解",
    "section_comments": "评论区精华",
    "section_full": "完整报告",
    "section_snippets": "关键源码片段",
    "report_next_page": "下一页",
    "report_close": "关闭",
    "report_page": "第 {page}/{pages} 页",
    "report_link": "原文链接",
    "impact_mark_high": "🔴",
    "impact_mark_medium": "🟡",
    "impact_mark_low": "⚪",
    "legend": "★ 必读 · 🔴 高影响 · 🟡 中影响 · ⚪ 低影响 · ⚠ 风险标记",
    "flag_count": "⚠{n}",
    "no_flags": "无风险标记",
    "unread": "仍未读（{n}）",
    "unread_dropped": "另有 {n} 个未读 PR 超过保留期限，已移出。",
    "button_read": "✅ 已读",
    "button_read_all": "✅ 全部标为已读",
    "read_by": "✅ {names}",
    "button_report": "📄 完整报告",
    "button_snooze": "💤 7天",
    "button_mute": "🔇 {tag} 7天",
    "button_snooze_long": "💤 暂停这个 PR 7 天",
    "button_mute_long": "🔇 这里屏蔽 {tag} 7 天",
    "button_more": "▶ 下一页",
    "tab_summary": "摘要",
    "tab_motivation": "动机",
    "tab_impl": "实现",
    "tab_files": "文件",
    "tab_comments": "评论",
    "tab_risks": "风险",
    "tab_related": "关联",
    "button_send_private": "📩 私聊发给我",
    "more_typed": "（或发送 {cmd}more）",
    "group_counts": "分组",
    "synthesis": "综述",
    "syn_by_tag": "按标签",
    "syn_by_impact": "按影响",
    "syn_breaking": "破坏性变更",
    "syn_hot_files": "热点文件",
    "syn_storylines": "脉络",
    "syn_revert": "回滚",
    "syn_related": "关联",
    "syn_changed": "自上次推送后有更新",
    "impact_unknown": "未标注",
}

_EN: dict[str, str] = {
    "tag_view": "tag view",
    "untitled": "PR digest",
    "not_yet": "none yet",
    "first_digest_line": " · first digest: reports since {since}",
    "colon": ": ",
    "prs": "{n} PRs",
    "prs_one": "{n} PR",
    "high_impact": "{n} high impact",
    "top_flags": "top risks",
    "impact": "impact",
    "impact_high": "high",
    "impact_medium": "medium",
    "impact_low": "low",
    "result_impact": " ({label}: {level})",
    "updated": "updated",
    "matched": "matched",
    "posted": "posted {time}",
    "must_read": "★",
    "more": "+{n} more",
    "other": "other",
    "empty_digest": "No new PRs in this window.",
    "button_risks": "Risks",
    "button_files": "Files",
    "continued": "cont.",
    "section_empty": "This report has no {section} section.",
    "one_liner": "One-liner",
    "recommendation": "Recommendation",
    "impact_level": "Impact level",
    "risk_flags": "Risk flags",
    "risks_text": "Risks",
    "impact_text": "Impact",
    "tags": "Tags",
    "merged_at": "Merged",
    "link": "Full report",
    "github_link": "GitHub",
    "key_symbols": "Key symbols",
    "module": "module",
    "category": "category",
    "kind": "kind",
    "symbols": "symbols",
    "section_summary": "Summary",
    "section_risks": "Risks and impact",
    "section_files": "Key files",
    "section_related": "Related PRs",
    "section_motivation": "Motivation",
    "section_impl": "Implementation",
    "section_comments": "Review highlights",
    "section_full": "Full report",
    "section_snippets": "Key code",
    "report_next_page": "Next page",
    "report_close": "Close",
    "report_page": "Page {page} of {pages}",
    "report_link": "full report",
    "impact_mark_high": "🔴",
    "impact_mark_medium": "🟡",
    "impact_mark_low": "⚪",
    "legend": "★ must read · 🔴 high impact · 🟡 medium · ⚪ low · ⚠ risk flags",
    "flag_count": "⚠{n}",
    "no_flags": "no risk flags",
    "unread": "Still unread ({n})",
    "unread_dropped": "{n} unread PRs older than the limit were dropped.",
    "button_read": "✅ Read",
    "button_read_all": "✅ Mark all read",
    "read_by": "✅ {names}",
    "button_report": "📄 Full report",
    "button_snooze": "💤 7d",
    "button_mute": "🔇 {tag} 7d",
    "button_snooze_long": "💤 Snooze this PR 7d",
    "button_mute_long": "🔇 Mute {tag} here 7d",
    "button_more": "▶ Next page",
    "tab_summary": "Summary",
    "tab_motivation": "Motivation",
    "tab_impl": "Implementation",
    "tab_files": "Files",
    "tab_comments": "Comments",
    "tab_risks": "Risks",
    "tab_related": "Related",
    "button_send_private": "📩 Send privately",
    "more_typed": " (or send {cmd}more)",
    "group_counts": "groups",
    "synthesis": "Synthesis",
    "syn_by_tag": "by tag",
    "syn_by_impact": "by impact",
    "syn_breaking": "Breaking changes",
    "syn_hot_files": "Hot files",
    "syn_storylines": "Storylines",
    "syn_revert": "revert",
    "syn_related": "related",
    "syn_changed": "Changed since the last digest",
    "impact_unknown": "unrated",
}

_LABELS: dict[Locale, dict[str, str]] = {Locale.ZH: _ZH, Locale.EN: _EN}

# Around a user id in a notice's text (private-use code points): templates/slack/notice.j2
# turns it into a mention, the other notice templates into the id.
MENTION_OPEN: Final = "\ue000"
MENTION_CLOSE: Final = "\ue001"

# How a notice names the command prefix (`{cmd}`) and the place it is read in: `{chat}` (a
# noun), `{whose}`/`{Whose}` (its possessive: 本群的, this channel's, your), `{holder}`/`{Holder}`
# (the subject: 本群, this channel, you) and `{has}` (the verb that agrees with it). Telegram's
# commands are `/subscribe`, and a chat there is a 群 (group); Slack's are words after `/pr`
# (`/pr subscribe`), in a channel (频道). A private chat (a Slack DM, a Telegram private chat)
# speaks of the person: 你的订阅, your subscriptions. The CLI and Telegram use the default.
_PLACE_WORDS: dict[Locale, dict[str, dict[str, str]]] = {
    Locale.EN: {
        "chat": {"chat": "chat", "whose": "this chat's", "holder": "this chat", "has": "has"},
        "channel": {
            "chat": "channel",
            "whose": "this channel's",
            "holder": "this channel",
            "has": "has",
        },
        "dm": {"chat": "DM", "whose": "your", "holder": "you", "has": "have"},
        "private": {"chat": "chat", "whose": "your", "holder": "you", "has": "have"},
    },
    Locale.ZH: {
        "chat": {"chat": "群", "whose": "本群的", "holder": "本群", "has": ""},
        "channel": {"chat": "频道", "whose": "本频道的", "holder": "本频道", "has": ""},
        "dm": {"chat": "私信", "whose": "你的", "holder": "你", "has": ""},
        "private": {"chat": "私聊", "whose": "你的", "holder": "你", "has": ""},
    },
}

# The command menu and /help in Chinese: (arguments, one line), by command name. English is the
# command table's own (bot/chat/commands.py); a test checks both name the same commands.
_ZH_COMMANDS: dict[str, tuple[str, str]] = {
    "start": ("", "这个机器人能做什么"),
    "pr": ("编号 [章节]", "查看 PR 报告：摘要、风险、文件…"),
    "risks": ("编号", "PR 的风险标记与影响：/risks 7422"),
    "files": ("编号", "PR 的关键文件：/files 7422"),
    "related": ("编号", "与 PR 相关的其他 PR：/related 7422"),
    "summary": ("编号", "PR 的一句话摘要与推荐动作：/summary 7422"),
    "find": ("查询", "查找报告：关键词、tag:、risk:、file:、impact:…"),
    "tags": ("", "最近 30 天的标签及报告数"),
    "digest": ("", "立即发送下一份摘要"),
    "subscribe": (
        "查询 [at 频率] | test 查询 [at 频率]",
        "添加一个查询的摘要订阅；test：回放查询最近 30 天的结果",
    ),
    "unsubscribe": ("编号…|all", "按编号取消订阅，或全部取消"),
    "subscriptions": ("", "查看这里的订阅（带编号）"),
    "schedule": ('09:00 [时区] | "0 9 * * mon-fri" [时区]', "设置推送时间"),
    "status": ("", "推送状态"),
    "unread": ("", "这里未读的必读 PR"),
    "more": ("", "最近一份摘要的下一页（“还有 N 个”）"),
    "help": ("", "使用说明"),
}


def chat_words(
    platform: Platform | None, locale: Locale, *, private: bool = False
) -> dict[str, str]:
    """`cmd`, `chat`, `whose`, `holder` and `has` for a notice read on `platform` (None:
    Telegram's words, the CLI), in a group or channel or, `private`, a person's own chat."""
    slack = platform is Platform.SLACK
    place = ("dm" if slack else "private") if private else ("channel" if slack else "chat")
    words = dict(_PLACE_WORDS[Locale(locale)][place])
    words["Whose"] = _capitalized(words["whose"])
    words["Holder"] = _capitalized(words["holder"])
    return {"cmd": "/pr " if slack else "/", **words}


def slack_mention(user_id: str) -> str:
    """A Slack user as a mention in a notice's text: the Slack notice template makes it
    `<@U123>` (only for an id of capitals and digits), the others show the id."""
    return f"{MENTION_OPEN}{user_id}{MENTION_CLOSE}"


def _capitalized(text: str) -> str:
    return text[:1].upper() + text[1:]


def error_text(error: Exception, locale: Locale) -> str:
    """A CadenceError, CronError or QueryError in `locale`: its `key` and `params` in the
    error table, and where it is (`position`); English, or a key the table lacks, is the
    error's own line."""
    key: str = getattr(error, "key", "")
    table = ERROR_TEXTS.get(Locale(locale), {})
    if key not in table:
        return str(error)
    words = ERROR_WORDS.get(Locale(locale), {})
    params: Mapping[str, str] = getattr(error, "params", {})
    shown = {name: words.get(name, {}).get(value, value) for name, value in params.items()}
    text = table[key].format_map(shown)
    position: int | None = getattr(error, "position", None)
    return text if position is None else text + table["at"].format(position=position)


def zh_command(name: str) -> tuple[str, str]:
    """A command's arguments and one-line description in Chinese."""
    return _ZH_COMMANDS[name]


class UnknownNoticeError(KeyError):
    """A notice key that the labels table does not have."""


def labels(locale: Locale) -> Mapping[str, str]:
    """The label table for one locale (templates read it as `L`)."""
    return _LABELS[locale]


def notice_keys() -> frozenset[str]:
    """Every notice key, the same in every locale."""
    return frozenset(NOTICES[Locale.EN])


def notice_text(key: str, locale: Locale, params: Mapping[str, str]) -> str:
    """The plain text of a notice, with `params` filled in (not escaped: callers escape)."""
    try:
        template = NOTICES[locale][key]
    except KeyError:
        known = ", ".join(sorted(notice_keys()))
        raise UnknownNoticeError(f"unknown notice {key!r} (known: {known})") from None
    try:
        return template.format_map({**chat_words(None, locale), **params})
    except KeyError as exc:
        raise UnknownNoticeError(f"notice {key!r} needs the parameter {exc.args[0]!r}") from None


def count_label(locale: Locale, key: str, n: int) -> str:
    """A label with a count, singular where the language has one (`1 PR`, `2 PRs`)."""
    table = _LABELS[locale]
    singular = table.get(f"{key}_one")
    template = singular if n == 1 and singular is not None else table[key]
    return template.format(n=n)
