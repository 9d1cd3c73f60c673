"""Hostile inputs of a chosen size, and a size-doubling clock (no tests here).

Used by the linear-time tests of the parser and the renderers and by the fault suite's size
case. Each generator returns text of about `n` characters built from one hostile pattern:
characters every platform escapes (`&`, `<`), one long line without a space, many short lines,
deep lists, backticks, emphasis marks, a long URL, CJK text. `markdown_report` wraps such text
into every section of a Markdown report; `wide_report` puts it into every field of a Report
directly (no parse-time caps), for the renderers.
"""

from __future__ import annotations

import gc
import time
from collections.abc import Callable

from bot.core.reports.model import KeyFile, RelatedPR, Report, Snippet

Generator = Callable[[int], str]


def _repeat(unit: str) -> Generator:
    return lambda n: (unit * (n // len(unit) + 1))[:n]


GENERATORS: dict[str, Generator] = {
    "amp": _repeat("&"),
    "lt": _repeat("<"),
    "no_spaces": _repeat("abcdefghij"),
    "many_lines": _repeat("x\n"),
    "blank_lines": _repeat("a\n\n"),
    "deep_list": lambda n: "".join(" " * (i % 64) + "- item\n" for i in range(n // 40 + 1))[:n],
    "backticks": _repeat("`"),
    "emphasis": _repeat("*_"),
    "long_url": lambda n: "https://example.com/" + _repeat("a/")(max(n - 20, 0)),
    "cjk": _repeat("漢字。风险，"),
    "mentions": _repeat("@here <!channel> "),
    "rules": _repeat("---\n"),
    "indented": _repeat("  note\n"),
}
# The patterns the issue measured as quadratic, the costliest for the splitter, and the ones
# that fed the parser's quadratic joins (continuation lines, rules).
WORST = ("amp", "lt", "no_spaces", "many_lines", "cjk", "indented", "rules")


def markdown_report(body: str) -> str:
    """A Markdown report with `body` in every free-text section, a snippet and the lists."""
    return (
        "# PR #7422 完整报告\n\n"
        "- 仓库：`verl-project/verl`\n"
        "- 标题：[rollout] fix: a title\n"
        "- 合并时间：2026-08-17 12:51\n"
        "- 原文链接：http://prhub.com.cn/verl-project/verl/pull/7422\n\n"
        f"# 执行摘要\n\n- 一句话：{body}\n- 推荐动作：值得精读。{body}\n\n"
        f"# 功能与动机\n\n{body}\n\n"
        f"# 实现拆解\n\n1. {body}\n\n关键文件：\n- `a/b.py`（模块 m）: {body}\n"
        f"  {body}\n\n关键符号：a, b\n\n"
        f"## 关键源码片段\n\n### `a/b.py`\n\n{body}\n\n```python\n{body}\n```\n\n"
        f"# 评论区精华\n\n{body}\n\n"
        f"# 风险与影响\n\n- 风险：{body}\n- 影响：{body} 影响程度：中\n- 风险标记：{body}\n\n"
        f"# 关联脉络\n\n- PR #7434 fix: title: {body}\n  {body}\n"
    )


# How many times markdown_report repeats its body.
BODY_COPIES = 16


def markdown_of_size(name: str, n: int) -> str:
    """A Markdown report of about `n` characters of the `name` pattern."""
    return markdown_report(GENERATORS[name](n // BODY_COPIES))


def continued_report(n: int) -> str:
    """A Markdown report whose key file note and related PR go on for `n` characters of
    continuation lines (each used to be joined onto the text so far: quadratic)."""
    lines = "  more\n" * (n // 14)
    return (
        markdown_report("x").split("# 执行摘要")[0]
        + f"\n# 实现拆解\n\n关键文件：\n- `a.py`: note\n{lines}"
        + f"\n# 关联脉络\n\n- PR #1 fix: t: r\n{lines}"
    )


def wide_report(body: str) -> Report:
    """A Report with `body` in every text field (as a stored report might be)."""
    return Report(
        repo="verl-project/verl",
        number=7422,
        title="[rollout] fix: " + body[:2000],
        url="https://github.com/verl-project/verl/pull/7422",
        summary=body,
        recommendation="值得精读。" + body,
        motivation=body,
        implementation=body,
        key_files=[KeyFile(path="a/" + body[:500], module="m", note=body)],
        key_symbols=["a", "b"],
        snippets=[Snippet(path="a/b.py", note=body, language="python", code=body)],
        comment_highlights=body,
        risks=body,
        impact=body,
        risk_flags=["a", "b"],
        related=[RelatedPR(number=7434, title="t", relation=body)],
    )


def long_report(body: str) -> Report:
    """A small report whose motivation is `body`: one long paragraph to split."""
    return Report(repo="verl-project/verl", number=7422, title="fix: a title", motivation=body)


ATTEMPTS = 3  # a ratio over its promise is measured again: a load burst, not a quadratic cost


def best_time(work: Callable[[], object], repeats: int) -> float:
    """The least CPU time of `repeats` runs of this process, with the garbage collector held
    off: other processes on a busy machine, and a collection that happens to fall in one run,
    skew wall time, not the work's own cost."""
    best = float("inf")
    for _ in range(repeats):
        gc.collect()
        gc.disable()
        try:
            start = time.process_time()
            work()
            best = min(best, time.process_time() - start)
        finally:
            gc.enable()
    return best


def growth(
    make: Callable[[int], Callable[[], object]],
    small: int,
    repeats: int,
    promise: float = float("inf"),
) -> float:
    """How much longer the work takes on 4x the input: time(4 small) / time(small). Over
    `promise`, measured again (ATTEMPTS in all) and the least ratio kept: a quadratic cost
    (16x) stays over it every time, a burst of load does not."""
    ratio = float("inf")
    for _ in range(ATTEMPTS):
        ratio = min(ratio, max(step_ratios(make, [small, 4 * small], repeats)))
        if ratio <= promise:
            break
    return ratio


def step_ratios(
    make: Callable[[int], Callable[[], object]], sizes: list[int], repeats: int
) -> list[float]:
    """time(4n) / time(n) for every n in `sizes` whose 4n is there too.

    Each time is the least of `repeats` runs, and the sizes take turns within each round: a
    load that comes and goes slows every size alike instead of skewing one ratio."""
    works = {n: make(n) for n in sizes}
    best = dict.fromkeys(sizes, float("inf"))
    for _ in range(repeats):
        for n, work in works.items():
            best[n] = min(best[n], best_time(work, 1))
    return [best[4 * n] / max(best[n], 1e-6) for n in sizes if 4 * n in best]
