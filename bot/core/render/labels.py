"""The words the bot itself says, in `zh` and `en`; report text is never translated.

Templates read labels through `labels(locale)`; small bot messages ("not found", usage) are
`notice_text(key, locale, params)`. Placeholders use `str.format` names (`{ref}`, `{n}`).
"""

from __future__ import annotations

from collections.abc import Mapping

from bot.core.models import Locale, Platform

_ZH: dict[str, str] = {
    "tag_view": "标签视图",
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
}

_EN: dict[str, str] = {
    "tag_view": "tag view",
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
    "link": "Link",
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
}

_SECTION_NAMES = "summary, risks, files, related, motivation, impl, comments, full"

# Small bot messages, by key (the commands name them; `{name}` parameters are user or report
# text and are escaped like report text). Both locales take the same parameters.
_NOTICES: dict[Locale, dict[str, str]] = {
    Locale.ZH: {
        "not_found": "没有找到 {ref} 的报告。",
        "ambiguous": "{ref} 对应多个仓库：{choices}。请写成 owner/repo#编号。",
        "bad_ref": "看不懂这个 PR 编号：{ref}。请写 7422、owner/repo#7422 或 PR 链接。",
        "bad_repo": "仓库应写成 owner/name：{repo}",
        "bad_tag": "标签只能包含字母、数字和 . _ - ：{tag}",
        "bad_timezone": "不认识的时区：{tz}（请用 Asia/Shanghai 这样的名字）",
        "bad_schedule": "无法设置推送时间：{reason}",
        "too_many_args": "参数太多（最多 {limit} 个）。",
        "usage": f"用法：/pr 编号 [章节]。章节：{_SECTION_NAMES}。",
        "usage_find": "用法：{cmd}find 查询。例如 {cmd}find 权重、{cmd}find risk:FP8、"
        "{cmd}find file:*rollout* impact>=medium -tag:ci",
        "usage_subscribe": "用法：{cmd}subscribe 查询 [at 频率]，例如 "
        "{cmd}subscribe tag:breaking at now、{cmd}subscribe rollout at weekly fri 17:00",
        "usage_unsubscribe": "用法：{cmd}unsubscribe 编号… 或 {cmd}unsubscribe all"
        "（编号见 {cmd}subscriptions）",
        "usage_schedule": "用法：{cmd}schedule 09:00 [时区] 或 "
        '{cmd}schedule "0 9 * * mon-fri" [时区]',
        "unknown_section": "没有「{section}」这个章节。可选：" + _SECTION_NAMES + "。",
        "unknown_command": "不认识的命令：{command}。发送 {cmd}help 查看用法。",
        "not_admin": "只有本{chat}管理员可以修改订阅。",
        "config_managed": "订阅 {name} 来自配置文件，请在配置里修改。",
        "locked": "本{chat}的订阅已在配置文件中锁定（频道 {name}），请在配置里修改。",
        "unknown_subscription": "这里没有编号为 {numbers} 的订阅。发送 {cmd}subscriptions 查看。",
        "subscribed": "已添加订阅 {number}：{query}（{cadence}），下一次：{next}。"
        "最近 {days} 天它会匹配 {recent} 个 PR。",
        "unsubscribed": "已取消订阅：{items}",
        "subscription_added": "{user} 添加了订阅 {number}：{query}（{cadence}）",
        "subscription_removed": "{user} 取消了订阅：{items}",
        "subscriptions": "本{chat}的订阅：\n{items}",
        "subscription_line": "{number}. {query} · {cadence} · 下一次 {next} · "
        "上一次 {last} · {owner}",
        "owner_chat": "本群",
        "owner_person": "个人（{user}）",
        "owner_config": "配置 {name}",
        "no_subscriptions": "本{chat}还没有订阅。发送 {cmd}subscribe 查询 [at 频率] 开始，"
        "例如 {cmd}subscribe tag:rollout at daily 09:00。",
        "schedule_set": "推送时间已设为 {cron}（{tz}），下一次：{next}",
        "schedule_changed": "{user} 把推送时间改为 {cron}（{tz}），下一次：{next}",
        "status": "状态：{state}\n上次推送：{last}\n待发送：{pending}，失败：{failed}",
        "digest_empty": "自上次推送以来没有新的 PR。",
        "find_empty": "没有找到与「{query}」匹配的报告。",
        "find_results": "与「{query}」匹配的报告：\n{items}",
        "find_results_more": "与「{query}」匹配的报告（共 {total} 个）：\n{items}\n"
        "还有 {more} 个未列出。加上条件可以缩小范围，例如 {example}",
        "bad_query": "查询写法有误：{error}",
        "bad_cadence": "推送频率写法有误：{error}",
        "picker": "用法：{cmd}subscribe 查询 [at 频率]，例如 {cmd}subscribe tag:breaking at now",
        "usage_subscribe_test": "用法：{cmd}subscribe test 查询 [at 频率]，例如 "
        "{cmd}subscribe test tag:breaking at daily 09:00",
        "replay": "回放「{query}」按 {cadence} 推送的最近 {days} 天（未做任何修改）："
        "匹配 {matched} 个 PR，{digests} 次推送，每周约 {per_week} 条消息。\n"
        "最新的匹配：\n{items}",
        "replay_empty": "回放「{query}」按 {cadence} 推送的最近 {days} 天："
        "没有匹配的 PR（未做任何修改）。",
        "no_tags": "最近 30 天没有带标签的报告。",
        "tags_list": "最近 30 天的标签：{items}",
        "help": "命令：\n{commands}",
        "welcome": "你好！我会把 PR 评审报告按标签推送到这里。\n{commands}",
        "error": "出错了，请稍后再试。",
        "how_to_ask": "发送 /pr 7422 查看报告，或发送 /help 查看命令。",
        "unavailable": "机器人暂时无法使用（数据库连接中断），请稍后再试。",
        "answer_cut": "只显示了前 {shown} 条（共 {total} 条）。完整报告：{link}，"
        "或在机器人所在主机运行 prdigest pr {ref} full。",
        "answer_cut_digest": "只显示了前 {shown} 条（共 {total} 条）。"
        "其余条目会在下一次定时推送中出现。",
        "topics_not_forum": "这个群没有开启话题（不是论坛群），"
        "所以按标签分话题的摘要改为直接发在群里。"
        "在群设置中开启「话题」后，之后的摘要会按标签发到各自的话题。",
    },
    Locale.EN: {
        "not_found": "No report found for {ref}.",
        "ambiguous": "{ref} matches several repos: {choices}. Write it as owner/repo#number.",
        "bad_ref": "Cannot read {ref} as a PR: write 7422, owner/repo#7422 or a PR link.",
        "bad_repo": "A repo is written owner/name: {repo}",
        "bad_tag": "A tag has only letters, digits and . _ -: {tag}",
        "bad_timezone": "Unknown time zone {tz} (use a name like Europe/Berlin).",
        "bad_schedule": "Cannot set that schedule: {reason}",
        "too_many_args": "Too many arguments (at most {limit}).",
        "usage": f"Usage: /pr NUMBER [SECTION]. Sections: {_SECTION_NAMES}.",
        "usage_find": "Usage: {cmd}find QUERY, e.g. {cmd}find 权重, {cmd}find risk:FP8, "
        "{cmd}find file:*rollout* impact>=medium -tag:ci",
        "usage_subscribe": "Usage: {cmd}subscribe QUERY [at CADENCE], e.g. "
        "{cmd}subscribe tag:breaking at now, {cmd}subscribe rollout at weekly fri 17:00",
        "usage_unsubscribe": "Usage: {cmd}unsubscribe N… or {cmd}unsubscribe all "
        "(the numbers {cmd}subscriptions shows)",
        "usage_schedule": 'Usage: {cmd}schedule 09:00 [TZ] or {cmd}schedule "0 9 * * mon-fri" [TZ]',
        "unknown_section": "There is no {section} section. Choose one of: " + _SECTION_NAMES + ".",
        "unknown_command": "Unknown command: {command}. Send {cmd}help for usage.",
        "not_admin": "Only admins of this {chat} can change its subscriptions.",
        "config_managed": "Subscription {name} comes from the config: change it there.",
        "locked": "This {chat}'s subscriptions are locked in the config (channel {name}): "
        "change them there.",
        "unknown_subscription": "No subscription {numbers} here: send {cmd}subscriptions to "
        "see them.",
        "subscribed": "Added subscription {number}: {query} ({cadence}); next: {next}. "
        "Over the last {days} days it would have matched {recent} PRs.",
        "unsubscribed": "Removed: {items}",
        "subscription_added": "{user} added subscription {number}: {query} ({cadence})",
        "subscription_removed": "{user} removed: {items}",
        "subscriptions": "Subscriptions of this {chat}:\n{items}",
        "subscription_line": "{number}. {query} · {cadence} · next {next} · last {last} · {owner}",
        "owner_chat": "the chat",
        "owner_person": "personal ({user})",
        "owner_config": "config {name}",
        "no_subscriptions": "This {chat} has no subscription yet: send "
        "{cmd}subscribe QUERY [at CADENCE], e.g. {cmd}subscribe tag:rollout at daily 09:00.",
        "schedule_set": "Digests now arrive at {cron} ({tz}); next: {next}",
        "schedule_changed": "{user} set the digest schedule to {cron} ({tz}); next: {next}",
        "status": "State: {state}\nLast digest: {last}\nPending: {pending}, failed: {failed}",
        "digest_empty": "No new PRs since the last digest.",
        "find_empty": "No report matches {query}.",
        "find_results": "Reports matching {query}:\n{items}",
        "find_results_more": "Reports matching {query} ({total}):\n{items}\n"
        "+{more} more. Add terms to narrow it, e.g. {example}",
        "bad_query": "{error}",
        "bad_cadence": "{error}",
        "picker": "Usage: {cmd}subscribe QUERY [at CADENCE], e.g. "
        "{cmd}subscribe tag:breaking at now",
        "usage_subscribe_test": "Usage: {cmd}subscribe test QUERY [at CADENCE], e.g. "
        "{cmd}subscribe test tag:breaking at daily 09:00",
        "replay": "Replay of {query} at {cadence} over the last {days} days (nothing changed): "
        "{matched} PRs matched, {digests} digests, about {per_week} messages a week.\n"
        "Newest matches:\n{items}",
        "replay_empty": "Replay of {query} at {cadence} over the last {days} days: no PR "
        "matched (nothing changed).",
        "no_tags": "No tagged reports in the last 30 days.",
        "tags_list": "Tags of the last 30 days: {items}",
        "help": "Commands:\n{commands}",
        "welcome": "Hello! I post PR review digests here, grouped by tag.\n{commands}",
        "error": "Something went wrong; please try again later.",
        "how_to_ask": "Send /pr 7422, or /help for the commands.",
        "unavailable": "The bot is temporarily unavailable (its database cannot be reached); "
        "please try again in a few minutes.",
        "answer_cut": "Showing the first {shown} of {total} messages. The full report: {link}, "
        "or run prdigest pr {ref} full on the bot's host.",
        "answer_cut_digest": "Showing the first {shown} of {total} messages. "
        "The rest arrive with the next scheduled digest.",
        "topics_not_forum": "This {chat} is not a forum (topics are off), so the digest is "
        "posted here directly instead of one topic per tag. Turn topics on in the group's "
        "settings and later digests go to a topic per tag.",
    },
}

_LABELS: dict[Locale, dict[str, str]] = {Locale.ZH: _ZH, Locale.EN: _EN}

# How a notice names the command prefix (`{cmd}`) and the place it is read in (`{chat}`):
# Telegram's commands are `/subscribe`, and a chat there is a 群 (group); Slack's are words
# after `/pr` (`/pr subscribe`), in a channel (频道). The CLI and Telegram use the default.
_CHAT_WORDS: dict[Platform | None, dict[Locale, dict[str, str]]] = {
    None: {Locale.EN: {"cmd": "/", "chat": "chat"}, Locale.ZH: {"cmd": "/", "chat": "群"}},
    Platform.SLACK: {
        Locale.EN: {"cmd": "/pr ", "chat": "channel"},
        Locale.ZH: {"cmd": "/pr ", "chat": "频道"},
    },
}

# The command menu and /help in Chinese: (arguments, one line), by command name. English is the
# command table's own (bot/core/commands.py); a test checks both name the same commands.
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
    "subscriptions": ("", "查看本群的订阅（带编号）"),
    "schedule": ('09:00 [时区] | "0 9 * * mon-fri" [时区]', "设置推送时间"),
    "status": ("", "推送状态"),
    "help": ("", "使用说明"),
}


def chat_words(platform: Platform | None, locale: Locale) -> dict[str, str]:
    """`cmd` and `chat` for a notice read on `platform` (None: Telegram's words, the CLI)."""
    return dict(_CHAT_WORDS.get(platform, _CHAT_WORDS[None])[Locale(locale)])


def zh_command(name: str) -> tuple[str, str]:
    """A command's arguments and one-line description in Chinese."""
    return _ZH_COMMANDS[name]


def zh_command_names() -> frozenset[str]:
    return frozenset(_ZH_COMMANDS)


class UnknownNoticeError(KeyError):
    """A notice key that the labels table does not have."""


def labels(locale: Locale) -> Mapping[str, str]:
    """The label table for one locale (templates read it as `L`)."""
    return _LABELS[locale]


def notice_keys() -> frozenset[str]:
    """Every notice key, the same in every locale."""
    return frozenset(_NOTICES[Locale.EN])


def notice_text(key: str, locale: Locale, params: Mapping[str, str]) -> str:
    """The plain text of a notice, with `params` filled in (not escaped: callers escape)."""
    try:
        template = _NOTICES[locale][key]
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
