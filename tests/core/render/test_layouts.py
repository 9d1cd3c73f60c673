"""Layouts (flat, threaded, topics) × verbosity (oneline, standard, full) × platform × locale.

Golden files under tests/golden/layouts/ hold the exact parts each layout posts for a
multi-repo mix (the samples in examples/reports, the seed as a later revision of 7422, and a
revert of 7458 that touches the same file) with the weekly synthesis, two still-unread PRs, a
note of dropped ones and a "+N more" button (`UPDATE_GOLDEN=1 pytest
tests/core/render/test_layouts.py` rewrites them; review the diff; docs/layouts.md quotes the
text ones).
"""

from __future__ import annotations

import dataclasses
import json
from datetime import date

import pytest

from bot.core.digest.select import Digest, DigestEntry, DigestFilter, StoredReport, build_digest
from bot.core.models import Format, Layout, Locale, Verbosity
from bot.core.render.options import ALL_PART, SUMMARY_PART, DigestOptions, DigestPart
from bot.core.render.renderer import Renderer
from bot.core.reports.model import ImpactLevel, KeyFile, RecommendationLevel, RelatedPR, Report
from bot.core.reports.parse.parser import parse_file
from tests.kits.paths import GOLDEN, SEED, TESTS
from tests.kits.render import SAMPLES, UPDATE, check_platform

RENDERER = Renderer()
DAY = date(2026, 8, 21)
MORE_KEY = "run-42"


def revert_of_7458() -> Report:
    return Report(
        repo="verl-project/verl",
        number=7530,
        title='Revert "[rollout, sglang] feat: stream weight updates"',
        url="https://github.com/verl-project/verl/pull/7530",
        summary="回滚 7458：分桶同步在 TP>1 时丢失最后一个 bucket",
        recommendation="建议阅读。回滚原因值得所有维护权重同步的同学了解。",
        recommendation_level=RecommendationLevel.READ,
        impact_level=ImpactLevel.HIGH,
        risk_flags=["部分更新无回滚", "显存碎片。"],
        tags=["rollout", "revert"],
        key_files=[KeyFile(path="verl/workers/rollout/sglang_rollout/weight_sync.py")],
        related=[RelatedPR(number=7458, title="stream weight updates", relation="本 PR 回滚它")],
    )


def mix() -> list[StoredReport]:
    items: list[StoredReport] = []
    by_ref: dict[str, int] = {}
    for path in [*SAMPLES, SEED]:
        parsed = parse_file(path).report
        revision = by_ref.get(parsed.ref, 0) + 1
        by_ref[parsed.ref] = revision
        items = [item for item in items if item.report.ref != parsed.ref]
        items.append(StoredReport(parsed, len(items) + 1, revision))
    items.append(StoredReport(revert_of_7458(), len(items) + 1))
    return items


def weekly_digest() -> Digest:
    items = mix()
    digest = build_digest(items[2:], DigestFilter(max_items=4), "verl-weekly", synthesis=True)
    unread = tuple(DigestEntry(item, item.report.tags[0].lower()) for item in items[:2])
    return dataclasses.replace(digest, unread=unread, unread_dropped=2)


WEEKLY = weekly_digest()
LAYOUTS = [layout.value for layout in Layout]
VERBOSITIES = [verbosity.value for verbosity in Verbosity]


def options(layout: str, verbosity: str) -> DigestOptions:
    return DigestOptions(Layout(layout), Verbosity(verbosity), synthesis=True, more_key=MORE_KEY)


def serialize(fmt: Format, parts: list[DigestPart]) -> str:
    if fmt is Format.TEXT:
        out = []
        for part in parts:
            for i, message in enumerate(part.messages, 1):
                head = f"════ part {part.key} ({part.label}) · message {i}/{len(part.messages)}"
                out.append(f"{head} ════\n{message.text}")
        return "\n\n".join(out) + "\n"
    shown = [
        {"key": p.key, "label": p.label, "messages": [m.payload for m in p.messages]} for p in parts
    ]
    return json.dumps(shown, ensure_ascii=False, indent=2) + "\n"


@pytest.mark.parametrize("locale", list(Locale))
@pytest.mark.parametrize("fmt", list(Format))
@pytest.mark.parametrize("verbosity", VERBOSITIES)
@pytest.mark.parametrize("layout", LAYOUTS)
def test_each_layout_and_verbosity_matches_the_golden_file(
    layout: str, verbosity: str, fmt: Format, locale: Locale
) -> None:
    parts = RENDERER.digest_parts(WEEKLY, fmt, locale, date=DAY, options=options(layout, verbosity))
    for part in parts:
        check_platform(fmt, part.messages)
    suffix = "txt" if fmt is Format.TEXT else "json"
    path = GOLDEN / "layouts" / f"{layout}-{verbosity}.{locale.value}.{fmt.value}.{suffix}"
    actual = serialize(fmt, parts)
    if UPDATE:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(actual, encoding="utf-8")
    assert path.exists(), f"missing {path.relative_to(TESTS)}: run UPDATE_GOLDEN=1 pytest"
    assert actual == path.read_text(encoding="utf-8")


# --- what the layouts post ------------------------------------------------------------------


def text_of(part: DigestPart) -> str:
    return "\n".join(message.text for message in part.messages)


def test_flat_is_one_part_with_header_synthesis_unread_groups_more_and_legend() -> None:
    [part] = RENDERER.digest_parts(
        WEEKLY, Format.TEXT, Locale.EN, date=DAY, options=options("flat", "standard")
    )
    text = text_of(part)
    assert part.key == ALL_PART
    order = ["verl-weekly · tag view", "== Synthesis ==", "[Still unread (2)]", "\n[rollout]\n"]
    order += ["+1 more", "★ must read · 🔴 high impact"]
    positions = [text.index(marker) for marker in order]
    assert positions == sorted(positions)
    assert "2 unread PRs older than the limit were dropped." in text


def test_threaded_posts_a_summary_then_one_part_per_group_without_the_digest_header() -> None:
    parts = RENDERER.digest_parts(
        WEEKLY, Format.TEXT, Locale.EN, date=DAY, options=options("threaded", "standard")
    )
    summary, *groups = parts
    assert summary.key == SUMMARY_PART
    assert [part.key for part in groups] == [group.tag for group in WEEKLY.groups]
    assert "groups: [rollout]" in text_of(summary)
    assert "[Still unread (2)]" in text_of(summary)
    assert "#" not in text_of(summary).split("[Still unread (2)]")[0].split("== Synthesis")[0]
    for part, group in zip(groups, WEEKLY.groups, strict=True):
        text = text_of(part)
        assert text.startswith(f"[{group.tag}]")
        assert "tag view" not in text
        assert all(f"#{entry.report.number}" in text for entry in group.entries)


@pytest.mark.parametrize("fmt", [Format.SLACK, Format.TELEGRAM])
def test_each_message_knows_the_entries_it_holds_not_the_prs_its_synthesis_names(
    fmt: Format,
) -> None:
    """A ✅ on a message marks read the PRs whose entries it holds; the summary names breaking
    PRs and storylines, but holds only the still-unread entries."""
    parts = RENDERER.digest_parts(
        WEEKLY, fmt, Locale.EN, date=DAY, options=options("threaded", "standard")
    )
    summary, *groups = parts
    held = {seq for message in summary.messages for seq in message.shows}
    assert held == {entry.item.seq for entry in WEEKLY.unread}
    for part, group in zip(groups, WEEKLY.groups, strict=True):
        held = {seq for message in part.messages for seq in message.shows}
        assert held == {entry.item.seq for entry in group.entries}


def test_topics_render_like_threaded_parts_labelled_for_forum_topics() -> None:
    threaded = RENDERER.digest_parts(
        WEEKLY, Format.TELEGRAM, Locale.ZH, options=options("threaded", "oneline")
    )
    topics = RENDERER.digest_parts(
        WEEKLY, Format.TELEGRAM, Locale.ZH, options=options("topics", "oneline")
    )
    assert [(p.key, p.label) for p in topics] == [(p.key, p.label) for p in threaded]
    assert topics[-1].label in ("其他", WEEKLY.groups[-1].tag)


def test_oneline_shows_one_line_per_pr_with_mark_and_flag_count() -> None:
    [part] = RENDERER.digest_parts(
        WEEKLY, Format.TEXT, Locale.EN, options=options("flat", "oneline")
    )
    lines = text_of(part).splitlines()
    assert "★ verl#7501 [BREAKING][trainer] refactor: remove legacy critic warmup and "
    assert any(line.startswith("★ verl#7501 ") and line.endswith("🔴 ⚠3") for line in lines)
    assert not any(line.startswith("  → ") for line in lines)


def test_full_shows_the_recommendations_numbered_points() -> None:
    [part] = RENDERER.digest_parts(WEEKLY, Format.TEXT, Locale.ZH, options=options("flat", "full"))
    text = text_of(part)
    assert "    1) 被删除的配置项清单与对应的新写法（PR 描述中的迁移表）；" in text
    assert "  → 建议精读，所有维护训练脚本或内部配置模板的同学都应该看一遍。重点：" in text


def test_the_synthesis_counts_every_item_not_only_the_shown_ones() -> None:
    synthesis = WEEKLY.synthesis
    assert synthesis is not None
    assert WEEKLY.shown < WEEKLY.total == synthesis.prs
    assert sum(n for _, n in synthesis.by_impact) == WEEKLY.total


def test_the_synthesis_lists_breaking_hot_files_storylines_and_changes() -> None:
    [part] = RENDERER.digest_parts(
        WEEKLY, Format.TEXT, Locale.EN, options=options("flat", "standard")
    )
    text = text_of(part)
    assert "== Breaking changes ==" in text
    assert "  verl#7501 [BREAKING][trainer]" in text
    assert "  vllm#24817 fix(scheduler)!" in text
    assert "  verl/workers/rollout/sglang_rollout/weight_sync.py ← verl#7458, verl#7530" in text
    assert "  verl#7530 → verl#7458 (revert): 本 PR 回滚它" in text
    assert "  verl#7458 → verl#7422 (related)" in text
    assert "== Changed since the last digest ==" in text
    assert "  verl#7422 [rollout] fix: preserve dummy" in text


def test_no_synthesis_unless_the_options_ask_for_it() -> None:
    plain = DigestOptions(Layout.FLAT, Verbosity.STANDARD)
    [part] = RENDERER.digest_parts(WEEKLY, Format.TEXT, Locale.EN, options=plain)
    assert "Synthesis" not in text_of(part)
    assert "Next page" not in json.dumps([m.payload for m in part.messages])


@pytest.mark.parametrize("layout", LAYOUTS)
@pytest.mark.parametrize("verbosity", VERBOSITIES)
def test_slack_digest_buttons_carry_entry_actions(layout: str, verbosity: str) -> None:
    parts = RENDERER.digest_parts(
        WEEKLY, Format.SLACK, Locale.EN, options=options(layout, verbosity)
    )
    values: dict[str, set[str]] = {}
    for part in parts:
        for message in part.messages:
            for block in message.payload["blocks"]:
                elements = [*block.get("elements", ()), block.get("accessory") or {}]
                for element in elements:
                    if element.get("type") == "button":
                        values.setdefault(element["action_id"], set()).add(element["value"])
                    for option in element.get("options", ()):
                        values.setdefault(element["action_id"], set()).add(option["value"])
    assert "read:verl-project/verl#7501" in values["entry:read"]
    assert values["entry:more"] == {f"more:{MORE_KEY}"}
    if verbosity != "oneline":
        assert "report:verl-project/verl#7501" in values["entry:report"]
        assert {"snooze:verl-project/verl#7501", "mute:trainer"} <= values["entry:menu"]


def test_telegram_keyboard_rows_read_report_then_the_menu() -> None:
    [part] = RENDERER.digest_parts(
        WEEKLY, Format.TELEGRAM, Locale.EN, options=options("flat", "standard")
    )
    rows = [r for m in part.messages for r in m.payload["reply_markup"]["inline_keyboard"]]
    data = [[button["callback_data"] for button in row] for row in rows]
    ref = "verl-project/verl#7501"
    assert [f"read:{ref}", f"report:{ref}", f"menu:{ref}"] in data
    assert [f"more:{MORE_KEY}"] in data
    labels = [button["text"] for row in rows for button in row]
    assert {"verl#7501 ✅ Read", "📄 verl#7501", "⋯ verl#7501"} <= set(labels)


def test_oneline_keeps_read_available_with_one_button_per_pr() -> None:
    [tg] = RENDERER.digest_parts(
        WEEKLY, Format.TELEGRAM, Locale.EN, options=options("flat", "oneline")
    )
    rows = [r for m in tg.messages for r in m.payload["reply_markup"]["inline_keyboard"]]
    entries = WEEKLY.shown + len(WEEKLY.unread)
    assert sum(1 for row in rows if row[0]["callback_data"].startswith("read:")) == entries
    assert all(len(row) == 1 for row in rows)


def test_text_output_shows_no_buttons_and_no_command_to_type() -> None:
    [part] = RENDERER.digest_parts(
        WEEKLY, Format.TEXT, Locale.ZH, options=options("flat", "standard")
    )
    assert all(set(m.payload) == {"text"} for m in part.messages)
    assert "\n还有 1 个 PR 未列出\n" in text_of(part)


@pytest.mark.parametrize(
    ("fmt", "typed"), [(Format.SLACK, "（或发送 /pr more）"), (Format.TELEGRAM, "（或发送 /more）")]
)
def test_the_more_line_tells_the_typed_command_of_its_platform(fmt: Format, typed: str) -> None:
    [part] = RENDERER.digest_parts(WEEKLY, fmt, Locale.ZH, options=options("flat", "standard"))
    assert f"还有 1 个 PR 未列出{typed}" in text_of(part)
