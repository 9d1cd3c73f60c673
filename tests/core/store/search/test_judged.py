"""A judged set: 30 queries, each with the PR a reader asking it wants to see first (or in the
first three), over the sample reports (examples/reports; tests/data/003_*.txt, the real
report, is verl-7422) among a store generated as the search benchmark generates its own:
titles from the real verl PR titles, each text field a few clauses cut from the samples'
long sections, drawn with Zipf weights, all merged after the samples, so that a search that
ranked newest first would put them first. Both backends (the `store` fixture; PostgreSQL
skips with how to enable it).
"""

from __future__ import annotations

import random
import re
from datetime import UTC, datetime, timedelta

from bot.core.query import parse
from bot.core.reports.model import KeyFile, Report
from bot.core.reports.parse.parser import parse_file
from bot.core.reports.tags import derive_tags
from bot.core.store.finder.search import search
from bot.core.store.reports import ReportStore
from tests.kits.paths import DATA, SAMPLES, SEED

NOW = datetime(2026, 12, 1, 9, tzinfo=UTC)
GENERATED = 200
LIMIT = 10
LONG = ("motivation", "implementation", "risks", "impact", "comment_highlights")
_CLAUSE_SPLIT = re.compile(r"[。；;\n]|(?<=[.!?])\s")

# (query, the PR a reader wants, how high: 1 = first, 3 = in the first three, why)
JUDGED: tuple[tuple[str, int, int, str], ...] = (
    ("权重", 7458, 1, "its one-liner and recommendation are about weight sync"),
    ("权重同步", 7458, 1, "its recommendation names the weight-sync path"),
    ("权重同步", 7422, 3, "its related-PR lines say 权重同步 three times"),
    ("分桶", 7458, 1, "bucketed streaming is its one-liner"),
    ("峰值显存", 7458, 1, "peak memory is its one-liner"),
    ("sglang 权重", 7458, 1, "SGLang weight updates are its title and one-liner"),
    ("tag:rollout 分桶", 7458, 1, "a tag and a word"),
    ("load_format", 7422, 1, "its title"),
    ("dummy", 7422, 1, "its title and one-liner"),
    ("disaggregated", 7422, 1, "its title"),
    # The generated reports' one-liners are the samples' clauses: one that says 广播 as
    # often in less text may rank above the sample it was cut from.
    ("广播", 7422, 3, "weight broadcast is its one-liner"),
    ("rollout 广播", 7422, 1, "both in its one-liner"),
    ("分离式训练", 7422, 3, "disaggregated training throughout its sections"),
    ("#7422", 7422, 1, "the PR named"),
    ("radix", 9087, 1, "its title"),
    ("LRU", 9087, 1, "its title and one-liner"),
    ("淘汰", 9087, 1, "eviction is its one-liner"),
    ("调度延迟", 9087, 1, "scheduling latency is its one-liner"),
    ("断言淘汰顺序", 9087, 1, "a key file's note"),
    ("typos", 9132, 1, "its title"),
    ("错别字", 9132, 1, "its one-liner"),
    ("默认值", 9132, 1, "stale defaults are its one-liner"),
    ("critic_warmup", 7501, 1, "its one-liner"),
    ("别名", 7501, 3, "aliases are its one-liner (cut into generated one-liners too)"),
    ("启动即报错", 7501, 1, "its one-liner"),
    ("迁移表", 7501, 3, "its recommendation, a key file's note and a related line"),
    ("max_model_len", 24817, 1, "its title"),
    ("截断", 24817, 1, "truncation is its one-liner"),
    ("拒绝", 24817, 1, "rejecting is its one-liner"),
    ("prompt", 24817, 3, "prompts are its title and one-liner"),
)


def _samples() -> list[Report]:
    reports = [parse_file(path).report for path in sorted(SAMPLES.glob("*.md"))]
    real = parse_file(SEED).report
    assert real.number in {r.number for r in reports}, "the real report is one of the samples"
    return reports


class _Corpus:
    """What the generated reports are drawn from (as bench/search.py draws its store)."""

    def __init__(self, samples: list[Report], rng: random.Random) -> None:
        clauses = {
            clause.strip()
            for report in samples
            for name in LONG
            for clause in _CLAUSE_SPLIT.split(str(getattr(report, name)))
            if len(clause.strip()) > 6
        }
        self.clauses = sorted(clauses)
        rng.shuffle(self.clauses)
        self.weights = [1 / (rank + 1) for rank in range(len(self.clauses))]
        lines = (DATA / "verl-pr-titles.txt").read_text(encoding="utf-8").splitlines()
        self.titles = [line.strip() for line in lines if line.strip()]
        self.files = sorted({kf.path for r in samples for kf in r.key_files})

    def text(self, rng: random.Random, count: int) -> str:
        return "。".join(rng.choices(self.clauses, self.weights, k=count))

    def report(self, rng: random.Random, number: int) -> Report:
        title = rng.choice(self.titles)
        return Report(
            repo="verl-project/verl",
            number=number,
            title=title,
            tags=derive_tags(title),
            merged_at=datetime(2026, 10, 1, tzinfo=UTC) + timedelta(hours=number),
            key_files=[KeyFile(path=path) for path in rng.sample(self.files, 2)],
            summary=self.text(rng, 1),
            recommendation=self.text(rng, rng.randint(0, 2)),
            **{name: self.text(rng, rng.randint(1, 4)) for name in LONG},
        )


async def _fill(store: ReportStore) -> None:
    samples = _samples()
    rng = random.Random(30)
    corpus = _Corpus(samples, rng)
    generated = [corpus.report(rng, 100 + n) for n in range(GENERATED)]
    await store.upsert_many([(report, "judged") for report in [*samples, *generated]])


async def test_each_judged_query_puts_its_pr_where_a_reader_wants_it(store: ReportStore) -> None:
    await _fill(store)
    missed: list[str] = []
    for raw, number, within, why in JUDGED:
        result = await search(store, parse(raw), limit=LIMIT, now=NOW)
        numbers = [hit.report.number for hit in result.hits]
        if number not in numbers[:within]:
            missed.append(f"{raw!r}: #{number} ({why}) not in the first {within}: {numbers}")
    assert not missed, "\n".join(missed)


async def test_scores_tell_the_hits_apart(store: ReportStore) -> None:
    """Chinese hits are ranked, not tied: the first ten of 权重 hold more than one score."""
    await _fill(store)
    result = await search(store, parse("权重"), limit=LIMIT, now=NOW)
    assert len({hit.score for hit in result.hits}) > 3
