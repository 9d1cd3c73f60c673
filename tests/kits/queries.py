"""Generated reports and queries for the search property test (issue 16).

Reports carry random Chinese and Latin text in every text field (with full-width forms,
case, runs of whitespace and the characters SQL LIKE and FTS5 treat specially), tags, repos,
risk flags, key files, symbols, levels and merge times. Queries are ASTs of every term and
operator of the language, their words drawn from the reports' own text (1-4 character
substrings, Latin words, words' starts, phrases), so most of them match something; Latin
words that hold others ("specific" holds "ci") check that words are matched whole. Field
terms are drawn for every field of the language's table (query/fields.py), each valued as its
kind of value says, so a field added to the table is in the generated queries at once.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Final

from bot.core.query import (
    TEXT_FIELDS,
    And,
    Field,
    Not,
    Or,
    Query,
    Text,
    normalize_text,
    unparse,
)
from bot.core.query.ast import COMPARISONS
from bot.core.query.fields import FIELD_TABLE, FieldTableError, Kind, field_spec
from bot.core.reports.model import ImpactLevel, KeyFile, RecommendationLevel, Report

NOW: Final = datetime(2026, 11, 20, 9, 0, tzinfo=UTC)
REPOS: Final = (
    "verl-project/verl",
    "sgl-project/sglang",
    "vllm-project/vllm",
    "Other/Verl",
    "a.b/c_d-e",
)
TAGS: Final = ("rollout", "SGLang", "ci", "docs", "perf", "fix", "fsdp", "Roll Out", "权重")
CJK: Final = (
    "权重同步显存上涨例外回滚推理训练内核缓存调度并行量化精度梯度张量算子通信分布式"
    "优化器检查点模型服务请求队列超时重试日志监控"
)
LATIN: Final = (
    "weight",
    "sync",
    "FP8",
    "ＦＰ８",
    "cache",
    "Rollout",
    "kernel",
    "NCCL",
    "tensor",
    "async",
    "OOM",
    "fsdp",
    "vLLM",
    "100%",
    "a_b",
    "x\\y",
    "it's",
    "ﬁx",
    "ß",
    "7422",
    "e.g.",
    "CI",
    "ci:",
    "specific",
    "decision",
    "v0.5.1",
    "roll-out",
    "load_format",
)
PATHS: Final = (
    "verl/workers/rollout/vllm_rollout.py",
    "verl/workers/fsdp_workers.py",
    "python/sglang/srt/server.py",
    "vllm/engine/llm_engine.py",
    "docs/index.md",
    "tests/test_rollout.py",
    "README.md",
    "csrc/kernels/fp8.cu",
)
SYMBOLS: Final = (
    "LLMServerClient",
    "SGLangHttpServer.__init__",
    "FSDPWorker.update_weights",
    "sync_weights",
    "torch::Tensor",
    "RolloutConfig",
)
RISKS: Final = ("FP8 例外", "显存上涨", "race condition", "兼容性", "  ", "NCCL hang")
NUMBERS: Final = (7, 42, 1000, 7400, 7422, 7450, 7500, 9999)
# Text leaves and how often each is drawn: words most, as they go through the index.
TEXT_LEAVES: Final = {"word": 30, "start": 8, "phrase": 8}


def _text(rng: random.Random, words: int) -> str:
    """A run of CJK substrings and Latin words, with varied whitespace and punctuation."""
    parts: list[str] = []
    for _ in range(words):
        if rng.random() < 0.55:
            start = rng.randrange(len(CJK) - 6)
            parts.append(CJK[start : start + rng.randint(1, 6)])
        else:
            parts.append(rng.choice(LATIN))
        parts.append(rng.choice([" ", " ", "", "，", "。", "\n", "  ", "\t", "、"]))
    return "".join(parts).strip()


def random_report(rng: random.Random, number: int) -> Report:
    """One report with every searched field filled at random (some left empty)."""
    texts = {name: _text(rng, rng.randint(0, 12)) for name in TEXT_FIELDS}
    texts["title"] = _text(rng, rng.randint(1, 6)) or "t"
    key_files = [
        KeyFile(path=rng.choice(PATHS), symbols=rng.sample(SYMBOLS, rng.randint(0, 2)))
        for _ in range(rng.randint(0, 3))
    ]
    merged = NOW - timedelta(hours=rng.randint(0, 24 * 60))
    return Report(
        repo=rng.choice(REPOS),
        number=number,
        merged_at=rng.choice([None, merged, merged.replace(tzinfo=None)]),
        recommendation_level=rng.choice(list(RecommendationLevel)),
        impact_level=rng.choice([None, *ImpactLevel]),
        key_files=key_files,
        key_symbols=rng.sample(SYMBOLS, rng.randint(0, 2)),
        risk_flags=rng.sample(RISKS, rng.randint(0, 3)),
        tags=rng.sample(TAGS, rng.randint(0, 3)),
        **texts,
    )


@dataclass
class Pool:
    """What queries draw from: the reports' own words and phrases."""

    words: list[str] = field(default_factory=list)
    phrases: list[str] = field(default_factory=list)
    numbers: list[int] = field(default_factory=list)

    @classmethod
    def of(cls, reports: Sequence[Report], rng: random.Random) -> Pool:
        pool = cls(numbers=[r.number for r in reports])
        for report in reports:
            for name in TEXT_FIELDS:
                text = normalize_text(getattr(report, name))
                pool.words.extend(w for w in text.split() if '"' not in w)
                pool._cut(rng, text)
        pool.words.extend(normalize_text(w) for w in LATIN)
        pool.words.extend(["显", "权重", "不存在的词", "zzqx", "%", "_", "\\"])
        return pool

    def _cut(self, rng: random.Random, text: str) -> None:
        """A few 1-4 character substrings (CJK words) and a longer phrase of `text`."""
        if not text:
            return
        for _ in range(3):
            start = rng.randrange(len(text))
            piece = text[start : start + rng.randint(1, 4)].strip()
            if piece and '"' not in piece:
                self.words.append(piece)
        start = rng.randrange(len(text))
        phrase = normalize_text(text[start : start + rng.randint(3, 14)])
        if phrase and '"' not in phrase:
            self.phrases.append(phrase)


_QUOTED: Final = frozenset(' ()":<>*')


# A field term's operator and canonical value, made for the kind of value the field takes.
ValueMaker = Callable[[random.Random, Pool], tuple[str, str]]


def _tag_value(rng: random.Random, _: Pool) -> tuple[str, str]:
    return ":", " ".join(rng.choice([*TAGS, "nope"]).lower().split())


def _repo_value(rng: random.Random, _: Pool) -> tuple[str, str]:
    repo = rng.choice(REPOS).lower()
    return ":", rng.choice([repo, repo.rsplit("/", 1)[-1], "nope/verl"])


def _risk_value(rng: random.Random, _: Pool) -> tuple[str, str]:
    flag = normalize_text(rng.choice([r for r in RISKS if r.strip()]))
    start = rng.randrange(len(flag))
    piece = flag[start : start + rng.randint(1, 5)].strip() or "*"
    return ":", rng.choice(["*", piece, flag])


def _level_value(levels: Sequence[str]) -> ValueMaker:
    def value(rng: random.Random, _: Pool) -> tuple[str, str]:
        return rng.choice([":", *COMPARISONS]), rng.choice(levels)

    return value


def _number_value(rng: random.Random, pool: Pool) -> tuple[str, str]:
    number = rng.choice([*pool.numbers, *NUMBERS])
    shape = rng.randrange(4)
    if shape == 0:
        return ":", str(number)
    if shape == 1:
        return rng.choice(COMPARISONS), str(number)
    low = rng.choice(["", str(max(1, number - rng.randint(0, 60)))])
    high = rng.choice(["", str(number + rng.randint(0, 60))])
    return ":", f"{low}..{high if low else high or number}"


def _file_value(rng: random.Random, _: Pool) -> tuple[str, str]:
    path = rng.choice(PATHS)
    parts = path.split("/")
    glob = rng.choice(
        [
            parts[-1],
            parts[-1].upper(),
            "*." + parts[-1].rsplit(".", 1)[-1],
            "/".join(parts[:-1]) + "/**" if len(parts) > 1 else "**",
            "**/" + parts[-1],
            parts[0] + "/*",
            path,
            "nothing/*.rs",
        ]
    )
    return ":", glob


def _symbol_value(rng: random.Random, _: Pool) -> tuple[str, str]:
    symbol = rng.choice(SYMBOLS)
    parts = symbol.replace("::", ".").split(".")
    return ":", rng.choice([symbol, rng.choice(parts), symbol.lower()])


def _time_value(rng: random.Random, _: Pool) -> tuple[str, str]:
    value = rng.choice(
        [
            f"{rng.randint(0, 70)}d",
            f"{rng.randint(0, 10)}w",
            f"{rng.randint(0, 1500)}h",
            (NOW - timedelta(days=rng.randint(-2, 70))).date().isoformat(),
        ]
    )
    return ":", value


# How often a term of each field (FIELD_TABLE) is drawn, and its value, by the field's kind:
# every field of the table is drawn, and a new one is drawn as soon as it is in the table.
BY_KIND: Final[dict[Kind, tuple[int, ValueMaker]]] = {
    Kind.TEXT: (8, _tag_value),
    Kind.REPO: (6, _repo_value),
    Kind.TEXT_OR_ANY: (6, _risk_value),
    Kind.IMPACT: (5, _level_value([level.value for level in ImpactLevel])),
    Kind.REC: (5, _level_value([level.value for level in RecommendationLevel])),
    Kind.GLOB: (6, _file_value),
    Kind.SYMBOL: (5, _symbol_value),
    Kind.TIME: (4, _time_value),
    Kind.NUMBER: (8, _number_value),
}
_UNDRAWN: Final = [kind.name for kind in Kind if kind not in BY_KIND]
if _UNDRAWN:  # a kind without values would leave its fields out of every query
    raise FieldTableError(f"the query kit makes no value of kind {', '.join(_UNDRAWN)}")
LEAVES: Final = (*TEXT_LEAVES, *(spec.name for spec in FIELD_TABLE))
LEAF_WEIGHTS: Final = (
    *TEXT_LEAVES.values(),
    *(BY_KIND[spec.kind][0] for spec in FIELD_TABLE),
)


def _start(rng: random.Random, pool: Pool) -> Text:
    """`roll*`: the start of a pool word, written bare (else `a*`)."""
    word = rng.choice(pool.words)
    start = word[: rng.randint(1, len(word))].rstrip("*")
    plain = start and start[0] not in "-#" and not set(start) & _QUOTED
    return Text(start if plain and unparse(Text(start)) == start else "a", prefix=True)


def _leaf(rng: random.Random, pool: Pool) -> Query:
    kind = rng.choices(LEAVES, weights=LEAF_WEIGHTS)[0]
    if kind == "word":
        return Text(rng.choice(pool.words))
    if kind == "start":
        return _start(rng, pool)
    if kind == "phrase":
        return Text(rng.choice(pool.phrases), phrase=True)
    op, value = BY_KIND[field_spec(kind).kind][1](rng, pool)
    return Field(kind, op, value)


def random_query(rng: random.Random, pool: Pool, depth: int = 0) -> Query:
    """A query of nesting depth at most 3: leaves under AND, OR and NOT."""
    if depth >= 3 or rng.random() < (0.25 if depth == 0 else 0.5):
        return _leaf(rng, pool)
    kind = rng.choices(["and", "or", "not"], weights=[5, 4, 2])[0]
    if kind == "not":
        return Not(random_query(rng, pool, depth + 1))
    items = tuple(random_query(rng, pool, depth + 1) for _ in range(rng.randint(2, 4)))
    return And(items) if kind == "and" else Or(items)
