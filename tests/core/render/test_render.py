"""Rendering digests, `/pr` sections and notices for Slack, Telegram and text.

Golden files under tests/golden/ hold the exact output for the seed report and the samples in
examples/reports/, in every format and locale (`UPDATE_GOLDEN=1 pytest
tests/core/render/test_render.py` rewrites them; review the diff).
The other tests check what a reader sees.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from datetime import UTC, datetime
from typing import Any

import pytest

from bot.core.digest.select import DigestFilter, StoredReport, build_digest, select_new
from bot.core.models import Format, Locale, Section
from bot.core.render.actions import EntryAction, parse_action
from bot.core.render.labels import UnknownNoticeError, labels
from bot.core.render.renderer import RenderedMessage, Renderer
from bot.core.render.slack import escape_mrkdwn
from bot.core.render.split import ELLIPSIS, Piece, cut_to_fit, pack, split_to_fit
from bot.core.render.telegram import callback_data, parse_callback_data
from bot.core.render.views import entry_view, lead_sentence, link_url
from bot.core.reports.model import ImpactLevel, KeyFile, RecommendationLevel, RelatedPR, Report
from bot.core.reports.parse.parser import parse_file
from tests.fakes.telegram.html import utf16_len
from tests.fakes.telegram.messages import parse_text
from tests.kits.paths import GOLDEN, ROOT, SEED, TESTS
from tests.kits.render import DAY, SAMPLES, UPDATE, check_platform

RENDERER = Renderer()


def report(**fields: Any) -> Report:
    base: dict[str, Any] = {
        "repo": "verl-project/verl",
        "number": 7422,
        "title": "[rollout] fix: preserve dummy load_format",
        "url": "https://github.com/verl-project/verl/pull/7422",
        "summary": "移除 dummy 格式覆盖",
        "recommendation": "值得精读。该 PR 展示了一个跨后端共有的配置契约，建议关注三点。\n1) 对比",
        "recommendation_level": RecommendationLevel.MUST_READ,
        "impact_level": ImpactLevel.MEDIUM,
        "risk_flags": ["移除隐式配置兜底", "FP8 例外一并删除"],
        "tags": ["rollout", "fix"],
    }
    return Report(**(base | fields))


def digest_of(*reports: Report, max_items: int = 30, revision: int = 1) -> Any:
    items = [StoredReport(r, seq, revision) for seq, r in enumerate(reports, 1)]
    return build_digest(items, DigestFilter(max_items=max_items), "verl-project/verl")


def slack_text(messages: list[RenderedMessage]) -> str:
    return json.dumps([m.payload for m in messages], ensure_ascii=False)


# --- golden files ---------------------------------------------------------------------------


def _stored_samples() -> list[StoredReport]:
    """The samples in ingest order, plus the seed as a later revision of the same PR."""
    items: list[StoredReport] = []
    by_ref: dict[str, int] = {}
    for path in [*SAMPLES, SEED]:
        parsed = parse_file(path).report
        revision = by_ref.get(parsed.ref, 0) + 1
        by_ref[parsed.ref] = revision
        items = [item for item in items if item.report.ref != parsed.ref]
        items.append(StoredReport(parsed, len(items) + 1, revision))
    return items


def _golden_cases() -> dict[str, Callable[[Format, Locale], list[RenderedMessage]]]:
    cases: dict[str, Callable[[Format, Locale], list[RenderedMessage]]] = {}
    seed = StoredReport(parse_file(SEED).report, 1)
    all_items = _stored_samples()
    everything = build_digest(all_items, DigestFilter(), "verl-daily")
    focused = DigestFilter(tags=("sglang", "rollout"), exclude_tags=("docs",), max_items=1)
    filtered = build_digest(select_new(all_items, focused, 0), focused, "verl-daily")
    cases["digest/seed"] = lambda f, loc: RENDERER.digest(
        build_digest([seed], DigestFilter(), seed.report.repo), f, loc, date=DAY
    )
    cases["digest/all"] = lambda f, loc: RENDERER.digest(everything, f, loc, date=DAY)
    cases["digest/filtered"] = lambda f, loc: RENDERER.digest(filtered, f, loc, date=DAY)
    for name, path in [("seed", SEED), *((p.stem, p) for p in SAMPLES)]:
        parsed = parse_file(path).report
        for section in (Section.SUMMARY, Section.RISKS):
            cases[f"{name}/{section.value}"] = _section_case(parsed, section)
    return cases


def _section_case(
    parsed: Report, section: Section
) -> Callable[[Format, Locale], list[RenderedMessage]]:
    return lambda fmt, locale: RENDERER.section(parsed, section, fmt, locale)


CASES = _golden_cases()


def _serialize(fmt: Format, messages: list[RenderedMessage]) -> str:
    if fmt is Format.TEXT:
        parts = [
            f"──── message {i}/{len(messages)} ────\n{m.text}" for i, m in enumerate(messages, 1)
        ]
        return "\n\n".join(parts) + "\n"
    return json.dumps([m.payload for m in messages], ensure_ascii=False, indent=2) + "\n"


@pytest.mark.parametrize("locale", list(Locale))
@pytest.mark.parametrize("fmt", list(Format))
@pytest.mark.parametrize("case", sorted(CASES))
def test_output_matches_the_golden_file(case: str, fmt: Format, locale: Locale) -> None:
    messages = CASES[case](fmt, locale)
    check_platform(fmt, messages)
    suffix = "txt" if fmt is Format.TEXT else "json"
    path = GOLDEN / f"{case}.{locale.value}.{fmt.value}.{suffix}"
    actual = _serialize(fmt, messages)
    if UPDATE:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(actual, encoding="utf-8")
    assert path.exists(), f"missing {path.relative_to(TESTS)}: run UPDATE_GOLDEN=1 pytest"
    assert actual == path.read_text(encoding="utf-8")


# --- the digest -----------------------------------------------------------------------------


def test_the_seed_digest_shows_the_tag_view_a_team_reads() -> None:
    seed = parse_file(SEED).report
    digest = build_digest([StoredReport(seed, 1, 2)], DigestFilter(), seed.repo)

    [message] = RENDERER.digest(digest, Format.TEXT, Locale.ZH, date=DAY)

    lines = message.text.splitlines()
    assert lines[0] == "verl-project/verl · 标签视图 · 2026-08-18"
    assert lines[1] == "1 个 PR"
    assert "[rollout]" in lines
    assert (
        "★ #7422 [rollout] fix: preserve dummy load_format in disaggregated rollout (更新)" in lines
    )
    assert "  移除 dummy 格式覆盖，修复分离式 rollout 权重广播" in lines
    assert any(line.startswith("  → 值得精读。该 PR 展示了") for line in lines)
    assert (
        "  🟡 影响：中 · ⚠ 移除隐式配置兜底 · standalone 需显式 auto · FP8 例外一并删除 · "
        "多后端行为一致性" in lines
    )


def test_labels_follow_the_locale_but_report_text_is_never_translated() -> None:
    digest = digest_of(report())

    [zh] = RENDERER.digest(digest, Format.TEXT, Locale.ZH)
    [en] = RENDERER.digest(digest, Format.TEXT, Locale.EN)

    assert "标签视图" in zh.text
    assert "影响：中" in zh.text
    assert "tag view" in en.text
    assert "impact: medium" in en.text
    assert "移除 dummy 格式覆盖" in en.text
    assert "移除隐式配置兜底" in en.text


def test_recommendation_shows_its_lead_sentence_only() -> None:
    assert lead_sentence("值得精读。该 PR 展示了一个跨后端共有的配置契约。建议关注：\n1) a") == (
        "值得精读。该 PR 展示了一个跨后端共有的配置契约。"
    )
    assert lead_sentence("Worth reading. It shows a contract. Then more.") == (
        "Worth reading. It shows a contract."
    )
    assert lead_sentence("x" * 400).endswith(ELLIPSIS)


def test_a_lead_that_announces_points_is_never_cut_at_its_colon() -> None:
    assert lead_sentence("可略读:\n1) a") == "可略读: 1) a"
    vllm = (
        "可略读。改动只有一个分支, 调用方需要知道:\n1) 超长请求返回 400;\n2) 可自行截断。\n尾声。"
    )
    assert lead_sentence(vllm) == (
        "可略读。改动只有一个分支, 调用方需要知道: 1) 超长请求返回 400; 2) 可自行截断。"
    )
    assert lead_sentence("值得精读。建议关注：\n1) 三个服务器如何共用相同 guard 逻辑；\n2) b") == (
        "值得精读。建议关注： 1) 三个服务器如何共用相同 guard 逻辑； 2) b"
    )
    assert not lead_sentence("Note: " + "x" * 400).endswith(":")
    assert lead_sentence("x" * 400).endswith(ELLIPSIS)


def test_updated_reports_carry_a_mark_in_every_format() -> None:
    digest = digest_of(report(), revision=2)

    assert "(更新)" in RENDERER.digest(digest, Format.TEXT, Locale.ZH)[0].text
    telegram = RENDERER.digest(digest, Format.TELEGRAM, Locale.EN)[0]
    assert "<i>(updated)</i>" in telegram.payload["text"]
    assert "_(updated)_" in slack_text(RENDERER.digest(digest, Format.SLACK, Locale.EN))


def test_more_than_max_items_ends_with_plus_n_more() -> None:
    reports = [report(number=n, title=f"PR {n}") for n in range(1, 8)]
    digest = digest_of(*reports, max_items=3)

    for fmt in Format:
        messages = RENDERER.digest(digest, fmt, Locale.EN)
        more, legend = [line for line in messages[-1].text.splitlines() if line.strip()][-2:]
        assert more == "+4 more"
        assert legend.startswith("★ must read")
    text = RENDERER.digest(digest, Format.TEXT, Locale.ZH)[-1].text
    assert text.endswith(
        "还有 4 个 PR 未列出\n\n★ 必读 · 🔴 高影响 · 🟡 中影响 · ⚪ 低影响 · ⚠ 风险标记"
    )


def test_an_empty_digest_says_so_when_posted() -> None:
    digest = build_digest([], DigestFilter(), "verl-daily")

    [message] = RENDERER.digest(digest, Format.TELEGRAM, Locale.EN)

    assert "0 PRs" in message.text
    assert "No new PRs" in message.text


def test_slack_entries_have_read_report_risks_files_buttons_and_a_later_menu() -> None:
    [message] = RENDERER.digest(digest_of(report()), Format.SLACK, Locale.ZH)

    actions = [b for b in message.payload["blocks"] if b["type"] == "actions"]
    *buttons, menu = actions[0]["elements"]
    assert [(e["action_id"], e["value"], e["text"]["text"]) for e in buttons] == [
        ("entry:read", "read:verl-project/verl#7422", "✅ 已读"),
        ("entry:report", "report:verl-project/verl#7422", "📄 完整报告"),
        ("pr_risks", "verl-project/verl#7422", "风险"),
        ("pr_files", "verl-project/verl#7422", "文件"),
    ]
    assert menu["type"] == "overflow"
    assert menu["action_id"] == "entry:menu"
    assert [(o["value"], o["text"]["text"]) for o in menu["options"]] == [
        ("snooze:verl-project/verl#7422", "💤 暂停这个 PR 7 天"),
        ("mute:rollout", "🔇 这里屏蔽 rollout 7 天"),
    ]
    assert message.payload["unfurl_links"] is False
    assert message.payload["unfurl_media"] is False


def test_telegram_entries_have_a_keyboard_row_whose_data_reads_back() -> None:
    [message] = RENDERER.digest(digest_of(report()), Format.TELEGRAM, Locale.EN)

    [row] = message.payload["reply_markup"]["inline_keyboard"]
    assert [button["text"] for button in row] == ["#7422 ✅ Read", "📄 #7422", "⋯ #7422"]
    assert [parse_action(b["callback_data"]) for b in row] == [
        (EntryAction.READ, "verl-project/verl#7422"),
        (EntryAction.REPORT, "verl-project/verl#7422"),
        (EntryAction.MENU, "verl-project/verl#7422"),
    ]
    assert message.payload["link_preview_options"] == {"is_disabled": True}


def test_callback_data_falls_back_to_the_number_when_the_repo_is_too_long() -> None:
    long_repo = "an-organisation-with-a-long-name/and-a-rather-long-repository-name"
    view = entry_view(report(repo=long_repo), False, labels(Locale.ZH))

    data = callback_data(Section.RISKS, view)

    assert len(data.encode()) <= 64
    assert parse_callback_data(data) == (Section.RISKS, "7422")


# --- escaping and links ---------------------------------------------------------------------


def test_slack_escapes_only_ampersand_and_angle_brackets() -> None:
    assert escape_mrkdwn("<!channel> & <@U1> 'q' \"d\" *b*") == (
        "&lt;!channel&gt; &amp; &lt;@U1&gt; 'q' \"d\" *b*"
    )


def test_slack_defangs_literal_broadcast_words() -> None:
    escaped = escape_mrkdwn("ping @here and @Channel, mail a@everyone.org, @heresy")

    assert "@here " not in escaped
    assert "@Channel" not in escaped
    assert "@everyone" not in escaped
    assert "@\u200bhere and @\u200bChannel" in escaped
    assert "@heresy" in escaped


def test_report_markup_stays_inert_in_slack() -> None:
    nasty = report(title="<!channel> <@U1>", summary="<https://evil.example|click> @here")

    messages = RENDERER.digest(digest_of(nasty), Format.SLACK, Locale.EN)

    check_platform(Format.SLACK, messages)  # the fake refuses live mentions and spoofed links
    dumped = slack_text(messages)
    assert "&lt;!channel&gt; &lt;@U1&gt;" in dumped
    assert "&lt;https://evil.example|click&gt;" in dumped


@pytest.mark.parametrize(
    "url",
    [
        "javascript:alert(1)",
        "https://evil.example|label",
        "https://a.example/<x>",
        "tg://resolve?domain=x",
        "ftp://files.example/a",
        "https://",
        "https://a.example/" + "x" * 2100,
    ],
)
def test_only_http_links_are_clickable(url: str) -> None:
    digest = digest_of(report(url=url))

    slack = slack_text(RENDERER.digest(digest, Format.SLACK, Locale.EN))
    telegram = RENDERER.digest(digest, Format.TELEGRAM, Locale.EN)[0].payload["text"]

    assert link_url(url) is None
    assert "|full report>" not in slack  # only the PR on GitHub is linked
    assert "<https://github.com/verl-project/verl/pull/7422|#7422>" in slack
    assert telegram.count("<a ") == 1
    assert '<a href="https://github.com/verl-project/verl/pull/7422">#7422</a>' in telegram


def test_an_http_link_with_query_string_is_escaped_inside_the_link() -> None:
    url = "https://x.example/pull/1?a=1&b=2"
    digest = digest_of(report(url=url))

    slack = slack_text(RENDERER.digest(digest, Format.SLACK, Locale.EN))
    telegram = RENDERER.digest(digest, Format.TELEGRAM, Locale.EN)[0].payload["text"]

    assert "<https://x.example/pull/1?a=1&amp;b=2|full report>" in slack
    assert '<a href="https://x.example/pull/1?a=1&amp;b=2">full report</a>' in telegram


def test_telegram_escapes_html_and_defangs_mentions() -> None:
    nasty = report(title="<script>x</script> & @admin", summary="a < b > c")

    [message] = RENDERER.digest(digest_of(nasty), Format.TELEGRAM, Locale.EN)

    plain, _ = parse_text(message.payload["text"], "HTML", None)
    assert "<script>x</script> & @\u2060admin" in plain
    assert "a < b > c" in plain


def test_text_output_drops_terminal_control_sequences_only() -> None:
    [message] = RENDERER.digest(
        digest_of(report(title="red \x1b[31m<b>&", summary="tab\there")), Format.TEXT, Locale.EN
    )

    assert "\x1b" not in message.text
    assert "red [31m<b>&" in message.text
    assert "tab\there" in message.text


# --- splitting ------------------------------------------------------------------------------


def test_a_big_digest_splits_between_entries_and_repeats_the_group_heading() -> None:
    reports = [
        report(number=n, title=f"PR {n} " + "标题" * 40, summary="总结" * 300, tags=["rollout"])
        for n in range(1, 61)
    ]
    digest = digest_of(*reports, max_items=100)

    for fmt in (Format.SLACK, Format.TELEGRAM):
        messages = RENDERER.digest(digest, fmt, Locale.ZH)
        check_platform(fmt, messages)
        assert len(messages) > 1
        shown = [line for m in messages for line in m.text.splitlines() if "#" in line[:8]]
        assert len(shown) == 60  # every entry once, none split
        for message in messages[1:]:
            assert message.text.lstrip("*").startswith("[rollout]")


def test_a_single_entry_too_long_is_cut_with_an_ellipsis_and_keeps_its_link() -> None:
    long_summary = "摘要😀" * 9000  # emoji (a surrogate pair in UTF-16) at every other cut point
    digest = digest_of(report(summary=long_summary))

    for fmt in Format:
        [message] = RENDERER.digest(digest, fmt, Locale.EN)
        check_platform(fmt, [message])
        assert ELLIPSIS in message.text
        assert "https://github.com/verl-project/verl/pull/7422" in json.dumps(message.payload)
        assert "\ufffd" not in message.text


def test_cutting_never_splits_an_emoji_sequence() -> None:
    family = "👨‍👩‍👧"
    text = "ab" + family * 5

    def fits_in(budget: int) -> Callable[[str], bool]:
        return lambda candidate: utf16_len(candidate) <= budget

    for budget in range(3, 30):
        cut = cut_to_fit(text, fits_in(budget))
        assert cut is not None
        kept = cut.removesuffix(ELLIPSIS)
        assert kept == "ab" + family * ((len(kept) - 2) // len(family))


def test_splitting_keeps_every_character_and_prefers_line_breaks() -> None:
    text = "\n".join(f"第{n}行 😀 <&>" for n in range(200))

    pieces = split_to_fit(text, lambda t: len(t.replace("<", "&lt;")) <= 300)

    assert len(pieces) > 1
    assert "\n".join(pieces) == text
    assert all(piece.endswith("<&>") for piece in pieces)


def test_packing_moves_a_trailing_heading_to_the_next_message_after_the_repeated_head() -> None:
    head = Piece("HEAD", (4,), keep_with_next=True)
    part = Piece("PART", (4,), keep_with_next=True)
    pieces = [
        Piece("intro", (5,)),
        Piece("a", (5,), heading=head),
        part,
        Piece("b", (5,), heading=head),
        Piece("c", (5,), heading=head),
    ]

    messages = pack(pieces, limit=(15,), separator=(0,))

    assert [[p.content for p in m] for m in messages] == [
        ["intro", "a"],
        ["HEAD", "PART", "b"],
        ["HEAD", "c"],
    ]


def test_packing_repeats_a_group_heading_once() -> None:
    group = Piece("[rollout]", (2,), keep_with_next=True)
    entries = [Piece(f"e{n}", (5,), heading=group) for n in range(3)]

    messages = pack([group, *entries], limit=(12,), separator=(1,))

    assert [[p.content for p in m] for m in messages] == [
        ["[rollout]", "e0"],
        ["[rollout]", "e1"],
        ["[rollout]", "e2"],
    ]


def test_full_section_of_a_long_report_splits_into_numbered_continuations() -> None:
    long = report(motivation="\n\n".join(f"段落 {n} " + "内容" * 500 for n in range(30)))

    for fmt in Format:
        messages = RENDERER.section(long, Section.FULL, fmt, Locale.EN)
        check_platform(fmt, messages)
        assert len(messages) > 1
        everything = "".join(m.text for m in messages)
        assert all(f"段落 {n} " in everything for n in range(30))
        for message in messages[1:]:
            assert "Full report (cont.)" in message.text.splitlines()[0]


# --- sections and notices -------------------------------------------------------------------


def test_summary_card_has_title_one_liner_recommendation_impact_flags_tags_and_link() -> None:
    [message] = RENDERER.section(report(), Section.SUMMARY, Format.TEXT, Locale.EN)

    text = message.text
    for expected in (
        "★ #7422 [rollout] fix: preserve dummy load_format",
        "移除 dummy 格式覆盖",
        "Recommendation:\n值得精读。",
        "Impact level: medium",
        "Risk flags: 移除隐式配置兜底, FP8 例外一并删除",
        "Tags: rollout, fix",
        "GitHub: https://github.com/verl-project/verl/pull/7422",
    ):
        assert expected in text


def test_files_and_related_sections_list_their_items() -> None:
    detailed = report(
        key_files=[KeyFile(path="verl/a.py", module="异步服务", symbols=["A.f"], note="核心")],
        key_symbols=["A.f", "B.g"],
        related=[RelatedPR(number=7434, title="[vllm] fix: x", relation="同属权重同步链路")],
    )

    [files] = RENDERER.section(detailed, Section.FILES, Format.TEXT, Locale.ZH)
    [related] = RENDERER.section(detailed, Section.RELATED, Format.TELEGRAM, Locale.ZH)

    assert "- verl/a.py\n  (模块 异步服务 · 符号 A.f)\n  核心" in files.text
    assert "关键符号：A.f, B.g" in files.text
    assert "• #7434 [vllm] fix: x：同属权重同步链路" in related.text


def test_a_missing_section_says_the_report_has_none() -> None:
    [message] = RENDERER.section(report(), Section.COMMENTS, Format.TEXT, Locale.ZH)

    assert "这份报告没有「评论区精华」部分。" in message.text


def test_section_accepts_a_stored_report_and_shows_its_updated_mark() -> None:
    [message] = RENDERER.section(
        StoredReport(report(), 3, revision=2), Section.RISKS, Format.TEXT, Locale.EN
    )

    assert message.text.startswith("★ #7422 [rollout] fix: preserve dummy load_format (updated)")


def test_notices_escape_their_parameters_per_platform() -> None:
    slack = RENDERER.notice("not_found", Format.SLACK, Locale.EN, ref="<!channel>")
    telegram = RENDERER.notice("not_found", Format.TELEGRAM, Locale.ZH, ref="<b>")
    text = RENDERER.notice("not_found", Format.TEXT, Locale.EN, ref="#7422")

    assert slack.payload["text"] == "No report found for &lt;!channel&gt;."
    check_platform(Format.SLACK, [slack])
    assert telegram.payload["text"] == "没有找到 &lt;b&gt; 的报告。"
    assert text.text == "No report found for #7422."


def test_unknown_notice_keys_and_missing_parameters_fail_loudly() -> None:
    with pytest.raises(UnknownNoticeError, match="unknown notice 'nope'"):
        RENDERER.notice("nope", Format.TEXT, Locale.EN)
    with pytest.raises(UnknownNoticeError, match="needs the parameter 'ref'"):
        RENDERER.notice("not_found", Format.TEXT, Locale.EN)


def test_the_default_templates_are_found_from_the_package() -> None:
    assert Renderer().templates_dir == ROOT / "templates"


def test_merge_time_appears_in_the_summary_card() -> None:
    dated = report(merged_at=datetime(2026, 8, 17, 12, 51, tzinfo=UTC))

    [message] = RENDERER.section(dated, Section.SUMMARY, Format.TEXT, Locale.ZH)

    assert "合并时间：2026-08-17 12:51" in message.text
