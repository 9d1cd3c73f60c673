"""Digest selection: what is new for a channel, how it is grouped, ordered, capped and rolled up."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta, timezone

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from bot.core.digest.select import (
    Digest,
    DigestFilter,
    StoredReport,
    build_digest,
    default_title,
    matches,
    select_new,
)
from bot.core.digest.synthesis import synthesize
from bot.core.models import Platform
from bot.core.reports.model import ImpactLevel, KeyFile, RecommendationLevel, RelatedPR, Report
from bot.settings import Channel

BASE_TIME = datetime(2026, 8, 17, 12, 0, tzinfo=UTC)


def stored(
    number: int,
    *,
    tags: tuple[str, ...] = (),
    repo: str = "verl-project/verl",
    impact: ImpactLevel | None = None,
    must_read: bool = False,
    merged_hours: float | None = 0,
    flags: tuple[str, ...] = (),
    seq: int | None = None,
    revision: int = 1,
) -> StoredReport:
    merged = None if merged_hours is None else BASE_TIME + timedelta(hours=merged_hours)
    level = RecommendationLevel.MUST_READ if must_read else RecommendationLevel.READ
    report = Report(
        repo=repo,
        number=number,
        title=f"PR {number}",
        merged_at=merged,
        impact_level=impact,
        recommendation_level=level,
        risk_flags=list(flags),
        tags=list(tags),
    )
    return StoredReport(report=report, seq=number if seq is None else seq, revision=revision)


def numbers(digest: Digest) -> list[list[int]]:
    return [[entry.report.number for entry in group.entries] for group in digest.groups]


def tags_of(digest: Digest) -> list[str]:
    return [group.tag for group in digest.groups]


def test_filter_is_built_from_the_channel_config() -> None:
    channel = Channel(
        name="verl-daily",
        platform=Platform.SLACK,
        target="C1",
        repos=["verl-project/verl"],
        tags=["Rollout", "sglang"],
        exclude_tags=["ci"],
        max_items=12,
    )

    flt = channel.digest_filter()

    assert flt == DigestFilter(("verl-project/verl",), ("rollout", "sglang"), ("ci",), 12)


def test_only_listed_repos_match_when_repos_are_set() -> None:
    flt = DigestFilter(repos=("verl-project/verl",))

    assert matches(stored(1), flt)
    assert not matches(stored(2, repo="vllm-project/vllm"), flt)
    assert matches(stored(3, repo="vllm-project/vllm"), DigestFilter())


def test_any_wanted_tag_matches_and_any_excluded_tag_rejects() -> None:
    flt = DigestFilter(tags=("rollout", "sglang"), exclude_tags=("ci",))

    assert matches(stored(1, tags=("fix", "sglang")), flt)
    assert not matches(stored(2, tags=("fix",)), flt)
    assert not matches(stored(3, tags=("rollout", "ci")), flt)
    assert not matches(stored(4), flt)


def test_exclude_tags_alone_keep_untagged_reports() -> None:
    flt = DigestFilter(exclude_tags=("doc",))

    assert matches(stored(1), flt)
    assert not matches(stored(2, tags=("doc",)), flt)


def test_tags_compare_case_insensitively() -> None:
    flt = DigestFilter(tags=("Rollout",), exclude_tags=("CI",))

    assert matches(stored(1, tags=("ROLLOUT",)), flt)
    assert not matches(stored(2, tags=("rollout", "Ci")), flt)


def test_only_reports_after_the_watermark_are_new_in_ingest_order() -> None:
    items = [stored(7, seq=7), stored(3, seq=3), stored(5, seq=5), stored(9, seq=9, tags=("ci",))]

    chosen = select_new(items, DigestFilter(exclude_tags=("ci",)), watermark=3)

    assert [item.seq for item in chosen] == [5, 7]


def test_a_late_report_with_an_old_merge_time_is_still_new_by_ingest_sequence() -> None:
    late = stored(1, seq=10, merged_hours=-240)

    assert select_new([late], DigestFilter(), watermark=9) == [late]


def test_each_pr_appears_once_under_its_first_tag_in_the_channel_order() -> None:
    flt = DigestFilter(tags=("rollout", "sglang"))
    items = [stored(1, tags=("sglang", "rollout", "fix")), stored(2, tags=("fix", "sglang"))]

    digest = build_digest(items, flt, "verl")

    assert tags_of(digest) == ["rollout", "sglang"]
    assert numbers(digest) == [[1], [2]]


def test_without_channel_tags_a_pr_goes_under_its_own_first_tag_and_untagged_under_other() -> None:
    items = [stored(1, tags=("ckpt", "feat")), stored(2), stored(3, tags=("vllm",))]

    digest = build_digest(items, DigestFilter(), "verl")

    assert sorted(tags_of(digest)[:-1]) == ["ckpt", "vllm"]
    assert tags_of(digest)[-1] == "other"
    assert numbers(digest)[-1] == [2]


def test_channel_tags_come_first_then_bigger_groups_then_other() -> None:
    flt = DigestFilter(tags=("sglang", "rollout"), exclude_tags=())
    items = [
        stored(1, tags=("rollout",)),
        stored(2, tags=("sglang",)),
        stored(3, tags=("fix",)),
        stored(4, tags=("ckpt",)),
        stored(5, tags=("ckpt",)),
        stored(6),
    ]

    digest = build_digest(items, flt, "verl")

    assert tags_of(digest) == ["sglang", "rollout", "ckpt", "fix", "other"]


def test_inside_a_group_must_read_then_impact_high_to_low_then_merge_time() -> None:
    items = [
        stored(1, tags=("rollout",), impact=ImpactLevel.LOW, merged_hours=1),
        stored(2, tags=("rollout",), impact=ImpactLevel.HIGH, merged_hours=5),
        stored(3, tags=("rollout",), impact=None, must_read=True, merged_hours=9),
        stored(4, tags=("rollout",), impact=ImpactLevel.HIGH, merged_hours=2),
        stored(5, tags=("rollout",), impact=ImpactLevel.MEDIUM, merged_hours=0),
        stored(6, tags=("rollout",), impact=None, merged_hours=None),
        stored(7, tags=("rollout",), impact=None, merged_hours=3),
    ]

    digest = build_digest(items, DigestFilter(), "verl")

    assert numbers(digest) == [[3, 4, 2, 5, 1, 7, 6]]


def test_merge_times_with_and_without_time_zone_order_on_one_clock() -> None:
    east = timezone(timedelta(hours=8))
    early = stored(1, tags=("a",))
    late = stored(2, tags=("a",))
    early = StoredReport(
        early.report.model_copy(update={"merged_at": datetime(2026, 8, 17, 18, 0, tzinfo=east)}),
        1,
    )
    late = StoredReport(
        late.report.model_copy(update={"merged_at": datetime(2026, 8, 17, 11, 0, tzinfo=UTC)}),
        2,
    )

    digest = build_digest([late, early], DigestFilter(), "verl")

    assert numbers(digest) == [[1, 2]]


def _as_a_tuple(item: StoredReport) -> tuple[int, int, datetime, int]:
    """The order the rank keeps, spelt out: must-read, impact high to low, merge time on one
    clock (undated last), seq."""
    report = item.report
    merged = report.merged_at or datetime.max.replace(tzinfo=UTC)
    merged = merged if merged.tzinfo else merged.replace(tzinfo=UTC)
    impact = [ImpactLevel.HIGH, ImpactLevel.MEDIUM, ImpactLevel.LOW, None].index(
        report.impact_level
    )
    return (
        report.recommendation_level is not RecommendationLevel.MUST_READ,
        impact,
        merged,
        item.seq,
    )


@settings(max_examples=200, deadline=None)
@given(
    st.lists(
        st.tuples(
            st.booleans(),
            st.sampled_from([ImpactLevel.HIGH, ImpactLevel.MEDIUM, ImpactLevel.LOW, None]),
            st.one_of(
                st.none(),
                st.datetimes(timezones=st.sampled_from([UTC, timezone(timedelta(hours=8))])),
                st.datetimes(),  # a header's wall-clock time, read as UTC
            ),
            st.integers(min_value=1, max_value=2**63 - 1),
        ),
        max_size=40,
        unique_by=lambda row: row[3],
    )
)
def test_the_rank_is_one_integer_in_the_order_of_its_parts(
    rows: list[tuple[bool, ImpactLevel | None, datetime | None, int]],
) -> None:
    items = []
    for must, impact, merged, seq in rows:
        item = stored(1, impact=impact, must_read=must, seq=seq)
        items.append(StoredReport(item.report.model_copy(update={"merged_at": merged}), seq))
    assert sorted(items, key=lambda item: item.rank) == sorted(items, key=_as_a_tuple)


def test_max_items_keeps_the_most_important_and_counts_the_rest_as_more() -> None:
    items = [stored(n, tags=("a",)) for n in range(1, 6)]
    items.append(stored(9, tags=("b",), impact=ImpactLevel.HIGH))

    digest = build_digest(items, DigestFilter(max_items=3), "verl")

    assert (digest.total, digest.shown, digest.more) == (6, 3, 3)
    assert sorted(n for group in numbers(digest) for n in group) == [1, 2, 9]


def test_rollup_counts_every_selected_pr_not_only_the_shown_ones() -> None:
    items = [
        stored(1, impact=ImpactLevel.HIGH, flags=("x", "y")),
        stored(2, impact=ImpactLevel.HIGH, flags=("y",)),
        stored(3, impact=ImpactLevel.LOW, flags=("y", "z", "z")),
    ]

    digest = build_digest(items, DigestFilter(max_items=1), "verl")

    assert digest.high_impact == 2
    assert digest.top_flags == (("y", 3),)


def test_top_flags_are_those_two_or_more_prs_share_by_count_then_first_seen() -> None:
    items = [
        stored(1, flags=("a", "b", "c", "d", "e", "f", "g")),
        stored(2, flags=("f", "e", "a", "b", "c", "d")),
        stored(3, flags=("f",)),
    ]

    digest = build_digest(items, DigestFilter(), "verl")

    assert digest.top_flags == (("f", 3), ("a", 2), ("b", 2), ("c", 2), ("d", 2))


def test_flags_count_as_one_across_case_width_and_punctuation() -> None:
    items = [
        stored(1, flags=("FP8 例外一并删除",)),
        stored(2, flags=("ｆｐ８例外一并删除。",)),
        stored(3, flags=("fp8-例外, 一并删除",)),
    ]

    digest = build_digest(items, DigestFilter(), "verl")

    assert digest.top_flags == (("FP8 例外一并删除", 3),)


def test_no_flag_shared_means_no_rollup() -> None:
    items = [stored(1, flags=("a", "b")), stored(2, flags=("c",))]

    assert build_digest(items, DigestFilter(), "verl").top_flags == ()


def test_entries_name_their_repo_only_when_the_digest_mixes_repos() -> None:
    one = [stored(1, repo="o/a"), stored(2, repo="O/A")]
    two = [stored(1, repo="o/a"), stored(2, repo="o/b")]

    assert build_digest(one, DigestFilter(), "c").show_repo is False
    assert build_digest(two, DigestFilter(), "c").show_repo is True
    assert build_digest(two, DigestFilter(repos=("o/a",)), "c").show_repo is False


def test_the_synthesis_is_built_only_when_asked_and_counts_every_item() -> None:
    items = [stored(n, impact=ImpactLevel.HIGH) for n in range(1, 5)]

    assert build_digest(items, DigestFilter(), "c").synthesis is None
    synthesis = build_digest(items, DigestFilter(max_items=1), "c", synthesis=True).synthesis
    assert synthesis is not None
    assert synthesis.prs == 4
    assert synthesis.by_impact == (("high", 4),)


def test_an_empty_window_makes_an_empty_digest() -> None:
    # Whether it is posted (`post_empty`) is plan_digest's call: tests/core/delivery/test_outbox.py
    digest = build_digest(select_new([stored(1, seq=1)], DigestFilter(), 1), DigestFilter(), "v")

    assert digest.is_empty
    assert (digest.total, digest.shown, digest.more) == (0, 0, 0)
    assert digest.groups == ()


def test_updated_mark_follows_the_revision() -> None:
    digest = build_digest([stored(1, revision=2), stored(2)], DigestFilter(), "verl")

    marks = {entry.report.number: entry.updated for g in digest.groups for entry in g.entries}
    assert marks == {1: True, 2: False}


@pytest.mark.parametrize(
    ("repos", "shown", "expected"),
    [
        (("verl-project/verl",), (), "verl-project/verl"),
        ((), ("o/r", "o/r"), "o/r"),
        ((), ("o/r", "a/b"), ""),
        (("a/b", "c/d"), ("a/b",), "a/b"),
        (("a/b", "c/d"), (), ""),
    ],
)
def test_title_is_the_one_repo_followed_or_shown_never_a_subscription_name(
    repos: tuple[str, ...], shown: tuple[str, ...], expected: str
) -> None:
    items = [
        StoredReport(report=Report(repo=repo, number=seq + 1, title="t"), seq=seq + 1)
        for seq, repo in enumerate(shown)
    ]
    assert default_title([DigestFilter(repos=repos)], items) == expected


def test_a_revert_title_marks_only_the_pr_it_names_as_reverted() -> None:
    revert = Report(
        repo="o/r",
        number=9,
        title='Revert "feat: x" (#5)',
        related=[RelatedPR(number=5, title="feat: x"), RelatedPR(number=4, title="other")],
    )

    synthesis = synthesize([(revert, 1)])

    assert [(line.kind, [pr.number for pr in line.prs]) for line in synthesis.storylines] == [
        ("revert", [9, 5])
    ]


def test_hot_files_are_key_files_two_or_more_prs_touched() -> None:
    def touching(number: int, *paths: str) -> Report:
        files = [KeyFile(path=path) for path in paths]
        return Report(repo="o/r", number=number, title="t", key_files=files)

    synthesis = synthesize([(touching(1, "a.py", "b.py"), 1), (touching(2, "a.py"), 2)])

    hot = [(f.path, [pr.number for pr in f.prs]) for f in synthesis.hot_files]
    assert hot == [("a.py", [1, 2])]
    assert [pr.number for pr in synthesis.changed] == [2]


def test_the_budget_goes_to_prs_not_yet_posted_here_before_posted_ones() -> None:
    posted = [stored(n, must_read=True, impact=ImpactLevel.HIGH) for n in (1, 2, 3)]
    unseen = [stored(n) for n in (4, 5)]
    notes = {item.seq: ((), "08:00" if item in posted else "") for item in posted + unseen}
    digest = build_digest(posted + unseen, DigestFilter(max_items=3), "t", notes)
    shown = [entry.report.number for group in digest.groups for entry in group.entries]
    assert sorted(shown) == [1, 4, 5], "the two unseen PRs, then the best posted one"
    assert digest.more == 2 and not digest.only_reposts
