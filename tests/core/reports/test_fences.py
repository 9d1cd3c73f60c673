"""Fenced code blocks are code: headings and bullets inside them never shape the report.

CommonMark: a fence opens with ≥3 ` or ~ and closes at the first later line of only the same
character, at least as many. Inside a fence, `# 风险与影响` at column 0 does not end a snippet,
its bullets are not risk flags, and a fence before the first section sets no title or repo.
"""

from __future__ import annotations

import pytest

from bot.core.reports.parse.parser import parse_markdown

HEADER = (
    "# PR #12 完整报告\n\n- 仓库：`o/r`\n- 标题：fix: small thing\n"
    "- 合并时间：2026-09-01 10:00\n- 原文链接：https://github.com/o/r/pull/12\n\n"
)
RISKS = "# 风险与影响\n\n- 风险：小\n- 影响：小。影响程度：低\n- 风险标记：真标记\n"


def snippet_with(code: str, fence: str = "```") -> str:
    return (
        HEADER
        + "# 关键源码片段\n\n### `a.py`\n\n说明\n\n"
        + f"{fence}python\n{code}\n{fence}\n\n"
        + RISKS
    )


@pytest.mark.parametrize("heading", ["# 风险与影响", "# Risks", "## 关联脉络", "# 执行摘要"])
@pytest.mark.parametrize("fence", ["```", "~~~", "````", "~~~~~"])
def test_a_section_heading_inside_a_fence_is_code(heading: str, fence: str) -> None:
    code = f"{heading}\n\n- 风险：假的\n- 风险标记：假标记, 另一个\n- PR #99 fake: 假的"
    result = parse_markdown(snippet_with(code, fence))
    report = result.report
    assert [s.path for s in report.snippets] == ["a.py"]
    assert report.snippets[0].code == code
    assert report.risk_flags == ["真标记"]
    assert report.risks == "小"
    assert report.related == []
    assert not any("appears again" in w or "never closed" in w for w in result.warnings)


def test_a_shorter_or_other_fence_inside_does_not_close_it() -> None:
    code = "~~~\n```\n# 风险与影响\n- 风险标记：假标记\n```"  # closes only at ````
    report = parse_markdown(snippet_with(code, "````")).report
    assert report.snippets[0].code == code
    assert report.risk_flags == ["真标记"]


def test_a_fence_in_the_header_area_sets_no_title_repo_or_number() -> None:
    fenced_header = (
        "```markdown\n# PR #666 完整报告\n- 仓库：`evil/repo`\n- 标题：spoofed title\n"
        "- 原文链接：https://github.com/evil/repo/pull/666\n```\n"
    )
    text = HEADER.replace("- 仓库", fenced_header + "- 仓库", 1) + RISKS
    result = parse_markdown(text)
    report = result.report
    assert (report.repo, report.number, report.title) == ("o/r", 12, "fix: small thing")
    assert report.url == "https://github.com/o/r/pull/12"
    assert any("code block before the first section skipped" in w for w in result.warnings)


def test_a_fence_before_the_header_bullets_gives_no_header_of_its_own() -> None:
    text = "~~~\n# PR #666\n- 仓库：`evil/repo`\n- 标题：spoofed\n~~~\n# 执行摘要\n\n- 一句话：x\n"
    with pytest.raises(Exception, match="no PR number"):
        parse_markdown(text)


def test_fenced_bullets_inside_the_risks_section_are_not_items() -> None:
    risks = "# 风险与影响\n\n- 风险：小\n\n```\n- 风险标记：假标记\n- 影响：假影响\n```\n"
    report = parse_markdown(HEADER + risks).report
    assert report.risk_flags == []
    assert report.impact == ""
    assert report.risks == "小\n```\n- 风险标记：假标记\n- 影响：假影响\n```"


def test_a_code_block_under_the_risk_flags_adds_no_flags() -> None:
    risks = RISKS + "```\n假标记, 另一个\n```\n"
    assert parse_markdown(HEADER + risks).report.risk_flags == ["真标记"]


def test_a_fence_never_closed_still_ends_at_the_next_section() -> None:
    text = HEADER + "# 关键源码片段\n\n### `a.py`\n\n```python\nx = 1\n\n" + RISKS
    result = parse_markdown(text)
    assert result.report.risk_flags == ["真标记"]
    assert result.report.snippets[0].code == "x = 1"
    assert any("code block is never closed" in w for w in result.warnings)
