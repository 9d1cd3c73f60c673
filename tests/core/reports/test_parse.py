"""The report parser: the seed report, tolerated variants, JSON, rejection, hostile input."""

from __future__ import annotations

import json
import re
import time
from collections.abc import Callable
from datetime import UTC, datetime, timedelta, timezone
from pathlib import Path
from typing import Any

import pytest

from bot.core.reports.model import ImpactLevel, RecommendationLevel, Report
from bot.core.reports.parse.caps import (
    KEY_FILES_MAX,
    LONG_TEXT_MAX,
    RELATED_MAX,
    TITLE_MAX,
    cut,
)
from bot.core.reports.parse.parser import (
    NotAReportError,
    ParseResult,
    content_hash,
    parse_bytes,
    parse_file,
    parse_json,
    parse_markdown,
)
from bot.core.reports.tags import TagRule
from tests.kits.paths import DATA, SAMPLES

SEED_PATH = DATA / "003_ccacf97c43044eb5.txt"
SEED = SEED_PATH.read_text(encoding="utf-8")
# Hostile input must finish: a quadratic path would take minutes here. This is a hang guard, not
# a speed target (those live in the benchmarks). It counts this process's CPU time, so a machine
# loaded by other test workers does not trip it.
SANITY_SECONDS = 5.0

SEED_TITLE = "[rollout] fix: preserve dummy load_format in disaggregated rollout"
SEED_RISK_FLAGS = [
    "移除隐式配置兜底",
    "standalone 需显式 auto",
    "FP8 例外一并删除",
    "多后端行为一致性",
]
SEED_KEY_SYMBOLS = [
    "SGLangHttpServer.__init__",
    "TRTLLMHttpServer.__init__",
    "VLLMAsyncServer.__init__",
    "_make_rollout_config",
    "init_config",
    "test_standalone_rollout",
    "test_agent_reward_loop_standalone",
]


def parse_seed(text: str = SEED) -> ParseResult:
    return parse_markdown(text, "seed.md")


@pytest.fixture(scope="module")
def seed() -> Report:
    return parse_seed().report


def key_fields(report: Report) -> dict[str, Any]:
    """What a digest shows and what identifies a report: must survive formatting variants."""
    return {
        "ref": report.ref,
        "title": report.title,
        "url": report.url,
        "merged_at": report.merged_at,
        "recommendation_level": report.recommendation_level,
        "recommendation_lines": len(report.recommendation.splitlines()),
        "impact_level": report.impact_level,
        "risk_flags": report.risk_flags,
        "risk_lines": len(report.risks.splitlines()),
        "key_files": [(k.path, k.module, k.category, k.kind, k.symbols) for k in report.key_files],
        "key_symbols": report.key_symbols,
        "snippets": [(s.path, s.language, len(s.code.splitlines())) for s in report.snippets],
        "related": [(r.number, r.title) for r in report.related],
        "tags": report.tags,
    }


def line_of(text: str, needle: str) -> int:
    return text[: text.index(needle)].count("\n") + 1


def minimal_report(*sections: str, header: str | None = None) -> str:
    """A small valid report; `sections` are Markdown blocks appended after the header."""
    head = header or (
        "# PR #12 完整报告\n\n- 仓库：`o/r`\n- 标题：fix: small thing\n"
        "- 合并时间：2026-09-01 10:00\n- 原文链接：https://github.com/o/r/pull/12\n"
    )
    return head + "\n" + "\n\n".join(sections) + "\n"


# --- the seed report ------------------------------------------------------------------------


def test_seed_parses_without_warnings() -> None:
    assert parse_seed().warnings == []


def test_seed_header_gives_repo_number_title_and_naive_merge_time(seed: Report) -> None:
    assert seed.repo == "verl-project/verl"
    assert seed.number == 7422
    assert seed.title == SEED_TITLE
    assert seed.merged_at == datetime(2026, 8, 17, 12, 51)  # noqa: DTZ001 (the header has no zone)
    assert seed.merged_at.tzinfo is None
    assert seed.url == "http://prhub.com.cn/verl-project/verl/pull/7422"


def test_seed_summary_and_recommendation_keep_numbered_sub_items(seed: Report) -> None:
    assert seed.summary == "移除 dummy 格式覆盖，修复分离式 rollout 权重广播"
    assert seed.recommendation_level is RecommendationLevel.MUST_READ
    lines = seed.recommendation.splitlines()
    assert lines[0].startswith("值得精读。该 PR 展示了一个跨后端")
    assert lines[1:] == [
        "1) 三个服务器如何共用相同 guard 逻辑（横向对比）；",
        "2) 移除 guard 后如何通过测试和示例守住契约边界；",
        "3) FP8 例外被删除的后续验证。",
    ]


def test_seed_motivation_and_implementation_stop_at_their_sections(seed: Report) -> None:
    assert seed.motivation.startswith("PR body 明确指出")
    assert seed.motivation.endswith("一并移除。")
    assert seed.implementation.startswith("1. 移除三个异步服务器")
    assert "4. 提交演进" in seed.implementation
    assert "关键文件" not in seed.implementation
    assert "关键符号" not in seed.implementation


def test_seed_risks_impact_level_and_exact_risk_flags(seed: Report) -> None:
    assert seed.impact_level is ImpactLevel.MEDIUM
    assert seed.risk_flags == SEED_RISK_FLAGS
    assert seed.risks.startswith("主要风险：")
    assert [line[:2] for line in seed.risks.splitlines()[1:]] == ["1)", "2)", "3)", "4)"]
    assert seed.impact.startswith("影响范围：")
    assert seed.impact.endswith("影响程度：中。")
    assert "风险标记" not in seed.impact


def test_seed_key_files_carry_module_category_kind_symbols_and_note(seed: Report) -> None:
    assert len(seed.key_files) == 7
    first = seed.key_files[0]
    assert first.path == "verl/workers/rollout/sglang_rollout/async_sglang_server.py"
    assert (first.module, first.category, first.kind) == ("异步服务", "source", "core-logic")
    assert first.symbols == ["SGLangHttpServer.__init__"]
    assert first.note.startswith("PR 核心修复对象：移除 __init__中")
    two_symbols = seed.key_files[4]
    assert two_symbols.path == "tests/experimental/agent_loop/test_standalone_rollout.py"
    assert (two_symbols.module, two_symbols.category) == ("独立测试", "test")
    assert two_symbols.symbols == ["init_config", "test_standalone_rollout"]
    last = seed.key_files[-1]
    assert last.path == "examples/generation/run_deepseek_llm_7b.sh"
    assert (last.module, last.category, last.kind) == ("示例脚本", "other", "configuration")
    assert last.symbols == []
    assert seed.key_symbols == SEED_KEY_SYMBOLS


def test_seed_snippets_have_path_note_language_and_code_without_fences(seed: Report) -> None:
    assert [s.path for s in seed.snippets] == [
        "verl/workers/rollout/sglang_rollout/async_sglang_server.py",
        "tests/workers/rollout/rollout_vllm/test_vllm_generation_determinism.py",
    ]
    assert [s.language for s in seed.snippets] == ["python", "python"]
    first, second = seed.snippets
    assert first.note.startswith("PR 核心修复对象")
    assert first.code.startswith("# verl/workers/rollout/sglang_rollout/async_sglang_server.py")
    assert "```" not in first.code
    assert "class SGLangHttpServer:" in first.code
    assert second.code.endswith("    return config")


def test_seed_comment_highlights_keep_quotes_and_bullets(seed: Report) -> None:
    assert seed.comment_highlights.startswith("该 PR 没有 review 评论")
    assert "> 结论：无公开讨论争议" in seed.comment_highlights
    assert seed.comment_highlights.endswith("功能修复保持不变。")


def test_seed_related_titles_keep_their_type_colon(seed: Report) -> None:
    assert [(r.number, r.title) for r in seed.related] == [
        (7434, "[vllm] fix: vllm always need to resume weights before weight sync"),
        (7413, "[sglang] fix: lora sglang e2e"),
        (7291, "[ckpt] feat: Node-local multi-sender broadcast in NCCL checkpoint engine"),
    ]
    # the relation has a full-width colon of its own; it stays in the relation
    assert seed.related[0].relation.startswith("同属 vLLM 权重同步链路：本 PR 保证")
    assert seed.related[1].relation.startswith("同改 SGLang rollout 文件")
    assert seed.related[2].relation.endswith("二者构成同一架构的两个侧面。")


def test_seed_tags_come_from_title_and_path_rules() -> None:
    assert parse_seed().report.tags == ["rollout", "fix"]
    rules = [TagRule(("tests/**",), "tests"), TagRule(("docs/**",), "docs")]
    assert parse_markdown(SEED, "seed.md", rules).report.tags == ["rollout", "fix", "tests"]


# --- tolerated variants ---------------------------------------------------------------------


def half_width(text: str) -> str:
    table = str.maketrans({"：": ": ", "（": "(", "）": ")", "；": ";", "，": ", "})
    return text.translate(table)


def ideographic_commas(text: str) -> str:
    flags = (
        "风险标记：移除隐式配置兜底 , standalone 需显式 auto, FP8 例外一并删除 , 多后端行为一致性"
    )
    return (
        text.replace(flags, "风险标记：" + "、".join(SEED_RISK_FLAGS))
        .replace("init_config, test_standalone_rollout", "init_config、test_standalone_rollout")
        .replace("关键符号：SGLangHttpServer.__init__, ", "关键符号：SGLangHttpServer.__init__，")
    )


def nested_with(indent: str) -> Callable[[str], str]:
    return lambda text: re.sub(r"(?m)^ (?=- |\d\) )", indent, text)


def extra_blank_lines(text: str) -> str:
    """Blank lines doubled and one after every bullet, outside code fences."""
    parts = text.split("```")
    for index in range(0, len(parts), 2):
        doubled = parts[index].replace("\n\n", "\n\n\n\n")
        parts[index] = re.sub(r"(?m)^(- .*)$", r"\1\n", doubled)
    return "```".join(parts)


def heading_levels_swapped(text: str) -> str:
    text = re.sub(r"(?m)^# (执行摘要|功能与动机|风险与影响|关联脉络)$", r"## \1", text)
    return text.replace("## 关键源码片段", "# 关键源码片段")


def without_pr_heading_and_repo(text: str) -> str:
    return text.replace("# PR #7422 完整报告\n", "").replace("- 仓库：`verl-project/verl`\n", "")


VARIANTS: dict[str, Callable[[str], str]] = {
    "half-width punctuation": half_width,
    "ideographic comma separators": ideographic_commas,
    "nested bullets with two spaces": nested_with("  "),
    "nested bullets with a tab": nested_with("\t"),
    "nested bullets without indentation": nested_with(""),
    "CRLF line endings": lambda text: text.replace("\n", "\r\n"),
    "CR line endings": lambda text: text.replace("\n", "\r"),
    "a byte order mark": lambda text: "\ufeff" + text,
    "extra blank lines": extra_blank_lines,
    "heading levels swapped": heading_levels_swapped,
    "number and repo only in the link": without_pr_heading_and_repo,
    "numbered section headings": lambda text: text.replace("# 执行摘要", "# 1. 执行摘要"),
}


@pytest.mark.parametrize("transform", VARIANTS.values(), ids=VARIANTS.keys())
def test_variant_of_seed_parses_to_the_same_key_fields(
    transform: Callable[[str], str], seed: Report
) -> None:
    variant = transform(SEED)
    assert variant != SEED
    result = parse_seed(variant)
    assert result.warnings == []
    assert key_fields(result.report) == key_fields(seed)


def test_variant_with_half_width_punctuation_keeps_relation_colons_in_the_relation() -> None:
    related = parse_seed(half_width(SEED)).report.related
    assert related[0].title == "[vllm] fix: vllm always need to resume weights before weight sync"
    assert related[0].relation.startswith("同属 vLLM 权重同步链路: 本 PR")


def test_missing_sections_are_warned_and_the_rest_still_parses(seed: Report) -> None:
    cut = (
        SEED[: SEED.index("# 评论区精华")]
        + SEED[SEED.index("# 风险与影响") : SEED.index("# 关联脉络")]
    )
    result = parse_seed(cut)
    assert result.warnings == ["missing section 评论区精华", "missing section 关联脉络"]
    assert result.report.related == []
    assert result.report.comment_highlights == ""
    assert result.report.risk_flags == seed.risk_flags
    assert result.report.key_files == seed.key_files


def test_unknown_section_is_skipped_with_a_warning_naming_its_line(seed: Report) -> None:
    text = SEED.replace("# 风险与影响", "# 附录\n\n一些无关的内容\n\n# 风险与影响")
    result = parse_seed(text)
    assert result.warnings == [f'line {line_of(text, "# 附录")}: unknown section "附录" skipped']
    assert result.report.comment_highlights == seed.comment_highlights
    assert "无关" not in result.report.risks


def test_deeper_unknown_heading_stays_in_its_section() -> None:
    text = SEED.replace("该行为在 vLLM", "### 背景\n\n该行为在 vLLM")
    result = parse_seed(text)
    assert result.warnings == []
    assert "### 背景" in result.report.motivation


def test_key_file_bullet_not_understood_is_warned_with_its_line(seed: Report) -> None:
    broken = "- 这里少了路径，只剩说明"
    text = SEED.replace("- `examples/generation/run_deepseek_llm_7b.sh`", broken, 1)
    result = parse_seed(text)
    line = line_of(text, broken)
    assert len(result.warnings) == 1
    assert result.warnings[0].startswith(f"line {line}: key file bullet not understood: {broken}")
    assert [k.path for k in result.report.key_files] == [k.path for k in seed.key_files[:-1]]


def test_unknown_key_file_attribute_is_warned_and_the_rest_kept() -> None:
    text = SEED.replace("（模块 示例脚本；", "（负责人 alice；模块 示例脚本；")
    result = parse_seed(text)
    assert len(result.warnings) == 1
    assert "key file attribute not understood: 负责人 alice" in result.warnings[0]
    assert result.report.key_files[-1].module == "示例脚本"


def test_key_file_attributes_separated_by_commas_still_split_on_attribute_names() -> None:
    text = minimal_report(
        "# 实现拆解\n\n关键文件：\n"
        "- `a/b.py`(module core, sched; category source，type core-logic，symbols f, g): note"
    )
    [key_file] = parse_markdown(text).report.key_files
    assert (key_file.module, key_file.category, key_file.kind) == (
        "core, sched",
        "source",
        "core-logic",
    )
    assert key_file.symbols == ["f", "g"]
    assert key_file.note == "note"


def test_unclosed_code_fence_is_warned_and_later_sections_still_read(seed: Report) -> None:
    text = SEED.replace("    return config\n\n```\n", "    return config\n\n")
    result = parse_seed(text)
    assert len(result.warnings) == 1
    assert result.warnings[0].endswith("code block is never closed")
    assert result.report.risk_flags == seed.risk_flags
    assert result.report.comment_highlights == seed.comment_highlights


def test_headings_inside_code_are_code_not_sections() -> None:
    text = minimal_report(
        "# 关键源码片段\n\n### `a.py`\n\n说明\n\n"
        "```python\n# 风险\n## no heading\n### `b.py`\nx = 1\n```",
        "# 风险与影响\n\n- 风险：小\n - 影响：小。影响程度：低\n - 风险标记：无",
    )
    report = parse_markdown(text).report
    assert [s.path for s in report.snippets] == ["a.py"]
    assert report.snippets[0].code == "# 风险\n## no heading\n### `b.py`\nx = 1"
    assert report.risks == "小"
    assert report.impact_level is ImpactLevel.LOW


@pytest.mark.parametrize(
    ("line", "title", "relation"),
    [
        ("PR #1 [a, b] feat: add x: 关系：细节", "[a, b] feat: add x", "关系：细节"),
        (
            "PR #2 fix(sched)!: drop y: stage 2: 后续拆分",
            "fix(sched)!: drop y: stage 2",
            "后续拆分",
        ),
        ("PR #3 Cleanup: 清理旧配置", "Cleanup", "清理旧配置"),
        ("PR #4 [ckpt]: nccl bucket size: same path", "[ckpt]: nccl bucket size", "same path"),
        ("PR #5 fix: see http://x.y/z: same area", "fix: see http://x.y/z", "same area"),
        ("PR #6 修复某问题：同一模块", "修复某问题", "同一模块"),
        ("#7 just a title", "just a title", ""),
        ("PR#8 [x] fix: y：关系", "[x] fix: y", "关系"),
    ],
)
def test_related_bullet_splits_title_from_relation(line: str, title: str, relation: str) -> None:
    text = minimal_report(f"# 关联脉络\n\n- {line}")
    [related] = parse_markdown(text).report.related
    assert (related.title, related.relation) == (title, relation)


def test_related_bullet_without_a_pr_number_is_warned() -> None:
    text = minimal_report("# 关联脉络\n\n- 无编号的关联说明")
    result = parse_markdown(text)
    assert result.report.related == []
    assert any("related PR bullet not understood: - 无编号的关联说明" in w for w in result.warnings)


@pytest.mark.parametrize(
    ("lead", "level"),
    [
        ("值得精读。", RecommendationLevel.MUST_READ),
        ("建议精读此 PR。", RecommendationLevel.MUST_READ),
        ("**推荐精读**：", RecommendationLevel.MUST_READ),
        ("可略读，了解结论即可。", RecommendationLevel.SKIM),
        ("选读。", RecommendationLevel.SKIM),
        ("可跳过：纯文档修改。", RecommendationLevel.SKIP),
        ("无需阅读。", RecommendationLevel.SKIP),
        ("本 PR 改动简洁但关键，适合精读。", RecommendationLevel.READ),
        ("建议阅读。", RecommendationLevel.READ),
        ("Must read: it changes the contract.", RecommendationLevel.MUST_READ),
        ("must-read", RecommendationLevel.MUST_READ),
        ("SKIM the tests.", RecommendationLevel.SKIM),
        ("Skip.", RecommendationLevel.SKIP),
        ("Read it when touching the scheduler.", RecommendationLevel.READ),
    ],
)
def test_recommendation_level_comes_from_the_lead_phrase(
    lead: str, level: RecommendationLevel
) -> None:
    text = minimal_report(f"# 执行摘要\n\n- 一句话：x\n- 推荐动作：{lead}")
    assert parse_markdown(text).report.recommendation_level is level


@pytest.mark.parametrize(
    ("impact", "level"),
    [
        ("影响程度：高。", ImpactLevel.HIGH),
        ("影响程度: 中", ImpactLevel.MEDIUM),
        ("范围很小，影响程度为低。", ImpactLevel.LOW),
        ("影响程度：较高", ImpactLevel.HIGH),
        ("Impact level: High.", ImpactLevel.HIGH),
        ("impact level: medium", ImpactLevel.MEDIUM),
        ("Impact level: low", ImpactLevel.LOW),
    ],
)
def test_impact_level_comes_from_the_impact_text(impact: str, level: ImpactLevel) -> None:
    text = minimal_report(f"# 风险与影响\n\n- 风险：x\n - 影响：{impact}\n - 风险标记：a")
    assert parse_markdown(text).report.impact_level is level


def test_impact_without_a_level_is_warned_and_left_empty() -> None:
    text = minimal_report("# 风险与影响\n\n- 风险：x\n - 影响：范围很小\n - 风险标记：a")
    result = parse_markdown(text)
    assert result.report.impact_level is None
    assert "no 影响程度 (高/中/低) in 风险与影响" in result.warnings


def test_header_accepts_iso_time_with_offset_and_a_github_link() -> None:
    header = (
        "- 标题：feat: x\n- 合并时间：2026-09-02T08:30:00+08:00\n"
        "- 原文链接：<https://github.com/sgl-project/sglang/pull/9132/files>\n"
    )
    report = parse_markdown(minimal_report(header=header)).report
    assert report.ref == "sgl-project/sglang#9132"
    assert report.merged_at == datetime(2026, 9, 2, 8, 30, tzinfo=timezone(timedelta(hours=8)))


def test_header_time_not_understood_is_warned() -> None:
    text = SEED.replace("2026-08-17 12:51", "上周五下午")
    result = parse_seed(text)
    assert result.report.merged_at is None
    assert result.warnings == [
        f"line {line_of(text, '上周五')}: 合并时间 not understood: 上周五下午"
    ]


# --- not a report ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "reason"),
    [
        ("", "no PR number"),
        ("just some notes\nabout nothing\n", "no PR number"),
        (SEED.replace("# PR #7422 完整报告\n", "").replace("/pull/7422", ""), "no PR number"),
        (SEED.replace(f"- 标题：{SEED_TITLE}\n", ""), "no title"),
        (SEED.replace("- 仓库：`verl-project/verl`\n", "").replace("/verl-project/verl", ""),
         "no repository"),
    ],
)  # fmt: skip
def test_text_that_is_no_report_is_rejected_with_the_reason(text: str, reason: str) -> None:
    with pytest.raises(NotAReportError) as caught:
        parse_markdown(text, "notes.md")
    assert caught.value.source == "notes.md"
    assert caught.value.reason.startswith(reason)
    assert str(caught.value) == f"notes.md: {caught.value.reason}"


def test_no_pr_number_reason_says_what_was_expected() -> None:
    with pytest.raises(NotAReportError) as caught:
        parse_markdown("# 执行摘要\n\n- 一句话：x\n", "x.md")
    assert caught.value.reason == 'no PR number (expected a "# PR #N" heading or a /pull/N link)'


def test_file_that_is_no_report_is_named_in_the_error(tmp_path: Path) -> None:
    path = tmp_path / "notes.md"
    path.write_text("# 会议记录\n\n- 标题：周会\n", encoding="utf-8")
    with pytest.raises(NotAReportError, match=re.escape(f"{path}: no PR number")):
        parse_file(path)


def test_invalid_utf8_is_rejected_naming_the_byte_offset() -> None:
    data = "# PR #1 报告\n".encode() + b"\xff\xfe tail"
    offset = len("# PR #1 报告\n".encode())
    with pytest.raises(NotAReportError) as caught:
        parse_bytes(data, "bad.md")
    assert caught.value.reason == f"invalid UTF-8 at byte {offset}"


def test_nul_characters_are_removed_with_a_warning(seed: Report) -> None:
    result = parse_seed(SEED.replace("移除 dummy", "移除\x00 dummy"))
    assert result.report.summary == seed.summary
    assert result.warnings == ["NUL characters removed"]
    data = seed.model_dump(mode="json")
    data["key_files"][0]["note"] += "\x00"
    from_json = parse_json(json.dumps(data))
    assert from_json.report == seed
    assert from_json.warnings == ["NUL characters removed"]


def test_unpaired_surrogate_in_json_is_rejected_not_crashing() -> None:
    data = '{"repo": "o/r", "number": 1, "title": "a\\ud800b"}'
    with pytest.raises(NotAReportError, match="title: Input should be a valid string"):
        parse_json(data)


# --- JSON -----------------------------------------------------------------------------------


def test_json_round_trip_gives_an_equal_report(seed: Report) -> None:
    result = parse_json(seed.model_dump_json(), "seed.json")
    assert result.report == seed
    assert result.warnings == []


def test_json_bytes_round_trip_with_path_rules_keeps_tags_stable() -> None:
    rules = [TagRule(("tests/**",), "tests")]
    report = parse_markdown(SEED, "seed.md", rules).report
    again = parse_json(report.model_dump_json().encode(), "seed.json", rules).report
    assert again == report


def test_json_derived_fields_are_computed_when_absent(seed: Report) -> None:
    data = seed.model_dump(mode="json")
    for key in ("recommendation_level", "impact_level", "tags"):
        del data[key]
    report = parse_json(json.dumps(data)).report
    assert report.recommendation_level is RecommendationLevel.MUST_READ
    assert report.impact_level is ImpactLevel.MEDIUM
    assert report.tags == ["rollout", "fix"]


def test_json_given_levels_are_kept_and_tags_merged_with_derived(seed: Report) -> None:
    data = seed.model_dump(mode="json") | {
        "recommendation_level": "skip",
        "impact_level": None,
        "tags": ["Hot", "rollout"],
    }
    report = parse_json(json.dumps(data)).report
    assert report.recommendation_level is RecommendationLevel.SKIP
    assert report.impact_level is None
    assert report.tags == ["rollout", "fix", "hot"]


def test_json_minimal_report_takes_repo_and_number_from_the_url() -> None:
    data = {"title": "fix: x", "url": "https://github.com/vllm-project/vllm/pull/24817"}
    report = parse_json(json.dumps(data)).report
    assert report.ref == "vllm-project/vllm#24817"
    assert report.tags == ["fix"]


def test_json_unknown_keys_are_warnings_not_failures(seed: Report) -> None:
    data = seed.model_dump(mode="json") | {"reviewer": "alice"}
    data["key_files"][0]["owner"] = "bob"
    result = parse_json(json.dumps(data))
    assert result.report == seed
    assert result.warnings == [
        'unknown key "key_files.0.owner" skipped',
        'unknown key "reviewer" skipped',
    ]


@pytest.mark.parametrize(
    ("change", "reason"),
    [
        ({"number": "seventy"}, "number: Input should be a valid integer"),
        ({"number": 0}, "number: Input should be greater than or equal to 1"),
        ({"key_files": [{"path": 3}]}, "key_files.0.path: Input should be a valid string"),
        ({"risk_flags": "a, b"}, "risk_flags: Input should be a valid list"),
        ({"impact_level": "huge"}, "impact_level: Input should be 'high', 'medium' or 'low'"),
        ({"merged_at": "yesterday"}, "merged_at: Input should be a valid datetime"),
    ],
)
def test_json_wrong_type_is_rejected_with_the_field_path(
    change: dict[str, Any], reason: str, seed: Report
) -> None:
    data = seed.model_dump(mode="json") | change
    with pytest.raises(NotAReportError) as caught:
        parse_json(json.dumps(data), "r.json")
    assert caught.value.reason.startswith(reason)


@pytest.mark.parametrize(
    ("data", "reason"),
    [
        ("[1, 2]", "expected a JSON object, got an array"),
        ('{"title": "x"', "invalid JSON at line 1 column 14"),
        ('{"title": "x", "repo": "o/r"}', "no PR number"),
        ('{"number": 3, "repo": "o/r"}', "no title"),
        ('{"number": 3, "title": "x"}', "no repository"),
        ("[" * 13000, "invalid JSON"),
        ('{"a": ' + "[" * 13000, "invalid JSON"),
        ('{"number": ' + "9" * 5000 + "}", "invalid JSON"),
    ],
)
def test_json_that_is_no_report_is_rejected_with_the_reason(data: str, reason: str) -> None:
    with pytest.raises(NotAReportError) as caught:
        parse_json(data, "r.json")
    assert caught.value.reason.startswith(reason), caught.value.reason


# --- bytes, files, hash ---------------------------------------------------------------------


def test_bytes_are_parsed_by_suffix_then_by_content(seed: Report) -> None:
    as_json = seed.model_dump_json().encode()
    assert parse_bytes(as_json, "r.json").report == seed
    assert parse_bytes(as_json, "upload").report == seed  # sniffed: starts with `{`
    assert parse_bytes(b"\xef\xbb\xbf \n" + as_json, "upload").report == seed
    assert parse_bytes(SEED.encode(), "upload").report == seed
    assert parse_bytes(SEED.encode(), "r.txt").report == seed
    with pytest.raises(NotAReportError):
        parse_bytes(as_json, "r.md")  # a .md file is Markdown, whatever it holds


def test_parse_file_reads_the_seed(seed: Report) -> None:
    result = parse_file(SEED_PATH)
    assert result.report == seed
    assert result.warnings == []


def test_content_hash_is_the_same_for_markdown_and_json_of_one_report(seed: Report) -> None:
    digest = content_hash(seed)
    assert re.fullmatch(r"[0-9a-f]{64}", digest)
    assert content_hash(parse_json(seed.model_dump_json()).report) == digest
    assert content_hash(parse_seed(SEED.replace("\n", "\r\n")).report) == digest


def test_content_hash_changes_when_the_report_changes(seed: Report) -> None:
    changed = parse_seed(SEED.replace("影响程度：中", "影响程度：高")).report
    assert content_hash(changed) != content_hash(seed)


# --- hostile input --------------------------------------------------------------------------


def finishes_quickly(run: Callable[[], object]) -> object:
    started = time.process_time()
    result = run()
    assert time.process_time() - started < SANITY_SECONDS
    return result


def test_brackets_13000_deep_everywhere_parse_quickly() -> None:
    brackets = "[" * 13000
    text = minimal_report(
        "# 实现拆解\n\n关键文件：\n- `a.py`（符号 " + brackets + "）: " + brackets,
        "# 关联脉络\n\n- PR #3 " + brackets + ": " + brackets,
        header="# PR #5 报告\n\n- 仓库：`o/r`\n- 标题：" + brackets + "\n",
    )
    result = finishes_quickly(lambda: parse_markdown(text))
    assert isinstance(result, ParseResult)
    assert result.report.title == cut(brackets, TITLE_MAX)  # cut at its cap, not a failure
    assert result.report.related[0].number == 3
    with pytest.raises(NotAReportError):
        finishes_quickly(lambda: parse_markdown(brackets))


def test_ten_thousand_nested_quotes_and_lists_parse_quickly() -> None:
    quotes = "> " * 10_000 + "x"
    lists = "- " * 10_000 + "x"
    indented = "\n".join(" " * depth + "- 影响：" for depth in range(0, 10_000, 7))
    text = minimal_report(
        "# 评论区精华\n\n" + quotes + "\n" + ">" * 10_000,
        "# 风险与影响\n\n- 风险：" + lists + "\n" + indented,
        "# 关联脉络\n\n" + quotes + "\n" + lists,
    )
    result = finishes_quickly(lambda: parse_markdown(text))
    assert isinstance(result, ParseResult)
    assert result.report.comment_highlights.endswith(">" * 10_000)
    assert result.report.risks == "- " * 9_999 + "- x"
    assert len(result.warnings) <= 51  # capped, with a "... and N more" line


def test_hundred_thousand_bullets_parse_quickly_with_capped_warnings() -> None:
    broken = "\n".join("- 不是关联" for _ in range(100_000))
    related = "\n".join(f"- PR #{i} [x] fix: t{i}: 关系" for i in range(1, 20_001))
    files = "\n".join(f"- `src/m{i}.py`（模块 m；符号 f{i}）: n" for i in range(20_000))
    risks = "\n".join(f" - 风险点 {i}" for i in range(100_000))
    text = minimal_report(
        "# 实现拆解\n\n关键文件：\n" + files,
        "# 风险与影响\n\n- 风险：很多\n" + risks,
        "# 关联脉络\n\n" + related + "\n" + broken,
    )
    result = finishes_quickly(lambda: parse_markdown(text))
    assert isinstance(result, ParseResult)
    assert len(result.report.key_files) == KEY_FILES_MAX  # the first ones: lists are capped
    assert len(result.report.related) == RELATED_MAX
    assert len(result.report.risks) == LONG_TEXT_MAX
    assert result.report.risks.startswith("很多\n- 风险点 0\n")
    assert len(result.warnings) == 51
    assert result.warnings[-1].startswith("... and ")


@pytest.mark.parametrize(
    "long_line",
    [
        "- 一句话：" + "字" * 2_000_000,
        "- PR #1 " + ": " * 1_000_000,
        "- `a.py`（" + "符号 x，" * 400_000 + "）",
        "- `a.py`(" + "(" * 2_000_000,
        "- " + "`" * 2_000_000,
        "x" * 2_000_000,
    ],
    ids=["one-liner", "colons", "attributes", "parens", "backticks", "plain"],
)
def test_one_two_megabyte_line_parses_quickly(long_line: str) -> None:
    text = minimal_report("# 执行摘要\n\n" + long_line, "# 关联脉络\n\n" + long_line)
    result = finishes_quickly(lambda: parse_markdown(text))
    assert isinstance(result, ParseResult)


def test_two_megabyte_report_parses_quickly() -> None:
    body = SEED[SEED.index("# 评论区精华") : SEED.index("# 风险与影响")]
    padding = body.replace("# 评论区精华", "").strip() * (2_000_000 // len(body))
    text = SEED.replace("# 风险与影响", padding + "\n\n# 风险与影响")
    assert len(text.encode()) > 2_000_000
    result = finishes_quickly(lambda: parse_markdown(text))
    assert isinstance(result, ParseResult)
    assert result.report.risk_flags == SEED_RISK_FLAGS


# --- the sample reports ---------------------------------------------------------------------

SAMPLE_PATHS = sorted(SAMPLES.glob("*.md"))


@pytest.mark.parametrize("path", SAMPLE_PATHS, ids=[p.name for p in SAMPLE_PATHS])
def test_sample_report_parses_without_warnings_and_is_named_for_its_pr(path: Path) -> None:
    result = parse_file(path)
    assert result.warnings == []
    report = result.report
    assert path.name == f"{report.repo.split('/')[1]}-{report.number}.md"
    assert report.impact_level is not None
    filled = ["summary", "recommendation", "motivation", "implementation", "comment_highlights"]
    filled += ["risks", "impact", "key_files", "key_symbols", "snippets", "related", "risk_flags"]
    assert [name for name in filled if not getattr(report, name)] == []


def test_samples_cover_repos_levels_and_tag_styles() -> None:
    reports = [parse_file(path).report for path in SAMPLE_PATHS]
    assert len(reports) == 6
    assert {r.repo for r in reports} == {
        "verl-project/verl",
        "vllm-project/vllm",
        "sgl-project/sglang",
    }
    assert {r.recommendation_level for r in reports} == set(RecommendationLevel)
    assert {r.impact_level for r in reports} == set(ImpactLevel)
    assert sum("breaking" in r.tags for r in reports) >= 2
    assert any(r.tags[:3] == ["rollout", "sglang", "feat"] for r in reports)
    assert all(datetime(2026, 8, 1, tzinfo=UTC) <= r.merged_at.replace(tzinfo=UTC)
               < datetime(2026, 10, 1, tzinfo=UTC)
               for r in reports if r.merged_at)  # fmt: skip


def test_sample_of_the_seed_is_the_seed_itself() -> None:
    assert (SAMPLES / "verl-7422.md").read_bytes() == SEED_PATH.read_bytes()
