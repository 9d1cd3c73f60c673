"""The small messages the bot says, by key and locale (the commands name them; `{name}`
parameters are user or report text and are escaped like report text). Both locales take the
same parameters. Read them through `labels.notice_text`."""

from __future__ import annotations

from bot.core.models import Locale

_SECTION_NAMES = "summary, risks, files, related, motivation, impl, comments, full"

NOTICES: dict[Locale, dict[str, str]] = {
    Locale.ZH: {
        "not_found": "没有找到 {ref} 的报告。",
        "button_unknown": "这个按钮已失效，请用命令再问一次（例如 {cmd}pr 7422）。",
        "ambiguous": "{ref} 对应多个仓库：{choices}。请写成 owner/repo#编号。",
        "bad_ref": "看不懂这个 PR 编号：{ref}。请写 7422、verl#7422、owner/repo#7422 或 PR 链接。",
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
        "locked": "{whose}订阅已在配置文件中锁定（频道 {name}），请在配置里修改。",
        "unknown_subscription": "这里没有编号为 {numbers} 的订阅。发送 {cmd}subscriptions 查看。",
        "subscribed": "已添加订阅 {number}：{query}（{cadence}），下一次：{next}。"
        "最近 {days} 天它会匹配 {recent} 个 PR。",
        "subscribed_as_tags": "已添加订阅 {number}：{query}（{cadence}），下一次：{next}。"
        "最近 {days} 天它会匹配 {recent} 个 PR。\n{words} 是已知标签，已按标签订阅；"
        "要匹配正文里的词，请加引号，例如 {example}。",
        "unsubscribed": "已取消订阅：{items}",
        "subscription_limit_destination": "这里已有 {limit} 个订阅，达到上限。"
        "请先用 {cmd}unsubscribe 编号 取消不需要的订阅，或把几个查询合成一个（用 OR）。",
        "subscription_limit_person": "你的个人订阅已有 {limit} 个，达到上限。"
        "请先在私聊里用 {cmd}unsubscribe 编号 取消不需要的订阅。",
        "subscription_added": "{user} 添加了订阅 {number}：{query}（{cadence}）",
        "subscription_removed": "{user} 取消了订阅：{items}",
        "subscriptions": "{whose}订阅：\n{items}",
        "subscription_line": "{number}. {query} · {cadence} · 下一次 {next} · "
        "上一次 {last} · {owner}",
        "subscription_bare_tags": "{number}. 里的 {words} 按文字匹配，它们现在也是标签。"
        "要按标签订阅：{cmd}unsubscribe {number}，再 {cmd}subscribe {query} at {cadence}",
        "owner_chat": "本{chat}",
        "owner_you": "你",
        "owner_user": "{user}",
        "owner_person": "用户 {user}",
        "owner_config": "配置 {name}",
        "no_subscriptions": "{holder}还没有订阅。发送 {cmd}subscribe 查询 [at 频率] 开始，"
        "例如 {cmd}subscribe tag:rollout at daily 09:00。",
        "schedule_none_own": "{whose}订阅都不能设置推送时间：\n{items}\n"
        "配置文件里的订阅请在配置中修改；立即推送的订阅在 PR 到达时推送，没有推送时间。",
        "schedule_skip_config": "{number}. {name}（来自配置文件）",
        "schedule_skip_now": "{number}. {name}（立即推送）",
        "schedule_set": "推送时间已设为 {cron}（{tz}），下一次：{next}",
        "schedule_changed": "{user} 把推送时间改为 {cron}（{tz}），下一次：{next}",
        "status": "状态：{state}\n上次推送：{last}\n待发送：{pending}，失败：{failed}",
        "digest_empty": "自上次推送以来没有新的 PR。",
        "find_empty": "没有找到与「{query}」匹配的报告。{hint}",
        "find_results": "与「{query}」匹配的报告：\n{items}{hint}",
        "find_results_more": "与「{query}」匹配的报告（共 {total} 个）：\n{items}\n"
        "还有 {more} 个未列出。加上条件可以缩小范围，例如 {example}{hint}",
        "find_results_more_bare": "与「{query}」匹配的报告（共 {total} 个）：\n{items}\n"
        "还有 {more} 个未列出。加上条件可以缩小范围。{hint}",
        "also_tags": "\n（{words} 也是标签：只看带这个标签的 PR，请写 {tags}）",
        "bad_query": "查询写法有误：{error}",
        "query_too_slow": "这个查询太慢（超过 {seconds} 秒），已停止。请缩小范围，"
        "例如少用 OR、加上 tag: 或 since: 条件。",
        "query_too_complex": "这个查询太复杂，数据库无法执行（{reason}）。请缩小范围，减少条件。",
        "search_busy": "正在进行的搜索太多，请稍后再试。",
        "search_busy_you": "你的上一个搜索还在进行，请等它完成后再试。",
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
        "busy": "机器人正忙，没有接下这条请求，请一分钟后再试。",
        "answer_cut": "只显示了前 {shown} 条（共 {total} 条）。完整报告：{link}，"
        "或点摘要里 {ref} 的 📄 完整报告按钮，逐章节翻看。",
        "report_start_bot": "请先私聊我并点「开始」（Start），再点 📩 私聊发给我。",
        "report_sent_private": "完整报告已私聊发给你。",
        "answer_cut_digest": "只显示了前 {shown} 条（共 {total} 条）。"
        "其余条目会在下一次定时推送中出现。",
        "digest_failing": "⚠ 这里的摘要已连续 {failures} 次没能生成，推送暂停，"
        "{retry} 自动再试，之后间隔逐渐拉长，恢复后照常补发。原因已记入机器人的日志：{error}",
        "topics_not_forum": "这个群没有开启话题（不是论坛群），"
        "所以按标签分话题的摘要改为直接发在群里。"
        "在群设置中开启「话题」后，之后的摘要会按标签发到各自的话题。",
        "marked_read": "✅ {ref} 已由 {user} 标记为已读",
        "snoozed": "💤 {user} 暂停了 {ref}：{until} 前不再出现在{whose}摘要中",
        "muted": "🔕 {user} 屏蔽了标签 {tag}：{until} 前不再出现在{whose}摘要中",
        "mute_not_admin": "只有本{chat}管理员可以屏蔽标签。",
        "no_digest_here": "{holder}还没有收到过摘要。",
        "unread_list": "{whose}未读必读 PR（{n}）：\n{items}",
        "unread_line": "{ref} {title} · 首次出现 {first} · 还剩 {left} 天",
        "unread_none": "{whose}最近 {days} 天的必读 PR 都已读。",
        "more_none": "最近的摘要没有更多条目了。",
        "reaction_read": "✅ {refs} 已由 {user} 标记为已读",
        "read_all_ask": "把这条消息里的 {n} 个 PR 全部标记为已读？",
        "read_all_done": "✅ 这条消息里的 {n} 个 PR 已标记为已读。",
    },
    Locale.EN: {
        "not_found": "No report found for {ref}.",
        "button_unknown": "This button no longer works; ask with a command (e.g. {cmd}pr 7422).",
        "ambiguous": "{ref} matches several repos: {choices}. Write it as owner/repo#number.",
        "bad_ref": "Cannot read {ref} as a PR: write 7422, verl#7422, owner/repo#7422 "
        "or a PR link.",
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
        "locked": "{Whose} subscriptions are locked in the config (channel {name}): "
        "change them there.",
        "unknown_subscription": "No subscription {numbers} here: send {cmd}subscriptions to "
        "see them.",
        "subscribed": "Added subscription {number}: {query} ({cadence}); next: {next}. "
        "Over the last {days} days it would have matched {recent} PRs.",
        "subscribed_as_tags": "Added subscription {number}: {query} ({cadence}); next: {next}. "
        "Over the last {days} days it would have matched {recent} PRs.\n{words}: read as tags "
        "(known tags); to match the words in the text instead, quote them, e.g. {example}.",
        "unsubscribed": "Removed: {items}",
        "subscription_limit_destination": "There are already {limit} subscriptions here, the "
        "most allowed. Remove one first ({cmd}unsubscribe NUMBER), or join queries with OR.",
        "subscription_limit_person": "You already have {limit} personal subscriptions, the "
        "most allowed. Remove one first ({cmd}unsubscribe NUMBER in your DM with the bot).",
        "subscription_added": "{user} added subscription {number}: {query} ({cadence})",
        "subscription_removed": "{user} removed: {items}",
        "subscriptions": "{Whose} subscriptions:\n{items}",
        "subscription_line": "{number}. {query} · {cadence} · next {next} · last {last} · {owner}",
        "subscription_bare_tags": "{number}. matches {words} in the text, not as tags (a tag "
        "has that name now). To mean the tags: {cmd}unsubscribe {number}, then "
        "{cmd}subscribe {query} at {cadence}",
        "owner_chat": "the chat",
        "owner_you": "you",
        "owner_user": "{user}",
        "owner_person": "personal ({user})",
        "owner_config": "config {name}",
        "no_subscriptions": "{Holder} {has} no subscription yet: send "
        "{cmd}subscribe QUERY [at CADENCE], e.g. {cmd}subscribe tag:rollout at daily 09:00.",
        "schedule_none_own": "None of {whose} subscriptions takes a schedule:\n{items}\n"
        "Change a config subscription in the config; one at now posts as PRs arrive.",
        "schedule_skip_config": "{number}. {name} (from the config)",
        "schedule_skip_now": "{number}. {name} (at now)",
        "schedule_set": "Digests now arrive at {cron} ({tz}); next: {next}",
        "schedule_changed": "{user} set the digest schedule to {cron} ({tz}); next: {next}",
        "status": "State: {state}\nLast digest: {last}\nPending: {pending}, failed: {failed}",
        "digest_empty": "No new PRs since the last digest.",
        "find_empty": "No report matches {query}.{hint}",
        "find_results": "Reports matching {query}:\n{items}{hint}",
        "find_results_more": "Reports matching {query} ({total}):\n{items}\n"
        "+{more} more. Add terms to narrow it, e.g. {example}{hint}",
        "find_results_more_bare": "Reports matching {query} ({total}):\n{items}\n"
        "+{more} more. Add terms to narrow it.{hint}",
        "also_tags": "\n({words}: also a tag; for the PRs with that tag only, write {tags})",
        "bad_query": "{error}",
        "query_too_slow": "This query took too long (over {seconds} s) and was stopped; narrow "
        "it, e.g. fewer ORs, or add tag: or since:.",
        "query_too_complex": "This query is too complex for the database ({reason}); narrow it "
        "with fewer terms.",
        "search_busy": "Too many searches are running; please try again in a moment.",
        "search_busy_you": "Your previous search is still running; try again once it is done.",
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
        "busy": "The bot is busy and did not take this request; please try again in a minute.",
        "answer_cut": "Showing the first {shown} of {total} messages. The full report: {link}, "
        "or press 📄 Full report under {ref} in a digest to read it section by section.",
        "report_start_bot": "Start a private chat with me first (open it and press Start), "
        "then press 📩 Send privately again.",
        "report_sent_private": "The full report is in your private chat with me.",
        "answer_cut_digest": "Showing the first {shown} of {total} messages. "
        "The rest arrive with the next scheduled digest.",
        "digest_failing": "⚠ The digest here failed to build {failures} times in a row, so "
        "it is held: the next try is at {retry}, then less and less often, and it catches up "
        "once it works. The reason is in the bot's log: {error}",
        "topics_not_forum": "This {chat} is not a forum (topics are off), so the digest is "
        "posted here directly instead of one topic per tag. Turn topics on in the group's "
        "settings and later digests go to a topic per tag.",
        "marked_read": "✅ {ref} read by {user}",
        "snoozed": "💤 {user} snoozed {ref}: it leaves {whose} digests until {until}",
        "muted": "🔕 {user} muted tag {tag}: it leaves {whose} digests until {until}",
        "mute_not_admin": "Only admins of this {chat} can mute a tag.",
        "no_digest_here": "No digest has been posted in this {chat} yet.",
        "unread_list": "Unread must-read PRs in this {chat} ({n}):\n{items}",
        "unread_line": "{ref} {title} · first shown {first} · {left} days left",
        "unread_none": "Nothing unread: every must-read PR of the last {days} days here was "
        "marked read.",
        "more_none": "The latest digest has no more entries.",
        "reaction_read": "✅ {refs} read by {user}",
        "read_all_ask": "Mark all {n} PRs in this message read?",
        "read_all_done": "✅ All {n} PRs in this message are marked read.",
    },
}

# The errors of cadences, crons and queries (CadenceError, CronError, QueryError) in a chat's
# language, by the error's `key`, filled with its `params`. English is the error's own line
# (`str(error)`, what the CLI prints too). What the user typed is shown in backticks.
ERROR_TEXTS: dict[Locale, dict[str, str]] = {
    Locale.ZH: {
        "at": "（第 {position} 个字符）",
        "cadence_unknown": "`{text}` 不是推送频率。可以写定时表达式（如 `0 9 * * mon-fri`）、"
        "`daily 09:00`、`workdays 09:30`、`weekly fri 17:00` 或 `now`",
        "cadence_form": "`{text}` 应写成 `{form}`，例如 `{example}`",
        "cadence_time": "时间 `{time}` 写法有误，请写 `HH:MM`（`00:00` 到 `23:59`）",
        "cadence_day_guess": "不认识的星期 `{day}`（是不是 `{guess}`？）",
        "cadence_day": "不认识的星期 `{day}`，可写 `{days}`",
        "cron_fields": "定时表达式 `{cron}` 需要 5 个字段（分钟 小时 日 月 星期）",
        "cron_question_mark": "定时表达式 `{cron}` 不能用 `?`，{part}字段请写 `*`",
        "cron_bad_field": "定时表达式 `{cron}` 的{part}字段 `{value}` 写法有误",
        "cron_never_fires": "定时表达式 `{cron}` 一年内都不会触发：没有日期与它匹配"
        "（例如二月没有 30、31 日，29 日四年才有一次）",
        "query_dash": "`-` 后面要紧跟一个词",
        "query_unclosed_quote": '引号 `"` 没有闭合',
        "query_too_long": "查询太长（{n} 个字符，最多 {limit} 个）",
        "query_empty": "查询是空的",
        "query_control": "查询里有控制字符 `{code}`，查询只能是纯文本",
        "query_too_many_terms": "词太多（{n} 个，最多 {limit} 个），请缩小查询",
        "query_unexpected_paren": "多了一个 `)`",
        "query_both_sides": "`{op}` 两边都要有词",
        "query_after": "`{op}` 后面要有一个词",
        "query_empty_parens": "括号里是空的",
        "query_unclosed_paren": "`(` 没有闭合",
        "query_too_deep": "嵌套太深（最多 {limit} 层）",
        "query_empty_phrase": "引号里是空的",
        "query_field_guess": "不认识的字段 `{field}`（是不是 `{guess}`？）",
        "query_field": "不认识的字段 `{field}`，可用的字段：`{fields}`",
        "query_operator": "`{field}` 只能用 `:`，不能用 `{op}`",
        "query_no_value": "`{field}{op}` 后面要写一个值",
        "query_level": "`{field}` 没有 `{value}` 这个值，可选：`{known}`",
        "query_date": "日期 `{value}` 写法有误，请写 `7d`、`2w` 或 `2026-11-01`",
        "query_number": "编号 `{value}` 写法有误，请写 `7422` 或 `7400..7500`",
        "query_range_colon": "编号范围 `{value}` 要用 `:`",
        "query_range_order": "范围 `{value}` 写反了，请写 `{fixed}`",
    },
}

# Parameter values an error names in English (a cron's field), in the chat's language.
ERROR_WORDS: dict[Locale, dict[str, dict[str, str]]] = {
    Locale.ZH: {
        "part": {
            "minute": "分钟",
            "hour": "小时",
            "day of month": "日",
            "month": "月",
            "day of week": "星期",
        },
    },
}
