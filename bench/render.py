"""Digest composition and rendering at scale, beside the time the platforms need to send it.

10,000 channels (half Slack, half Telegram, random tag filters, both locales) each get the
digest of the same 500 new reports: select → build → render. The figure that matters is
rendering time against the time the rate limits need to deliver the result: Telegram sends
about 30 messages/s per bot overall; Slack about 1 message/s per channel (channels in
parallel). Aim: rendering ≤ 5% of the sending time.

    python bench/render.py            # 10,000 channels
    python bench/render.py --quick    # 1,000 channels
"""

from __future__ import annotations

import argparse
import json
import random
import sys
import time
from collections.abc import Sequence
from datetime import date, timedelta
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:  # runnable as `python bench/render.py` from anywhere
    sys.path.insert(0, str(ROOT))

from bot.core.digest.select import (  # noqa: E402
    DigestFilter,
    StoredReport,
    build_digest,
    default_title,
    select_new,
)
from bot.core.models import Format, Locale  # noqa: E402
from bot.core.render.renderer import Renderer  # noqa: E402
from bot.core.reports.model import ImpactLevel, RecommendationLevel, Report  # noqa: E402
from bot.core.reports.parse.parser import parse_file  # noqa: E402

TELEGRAM_MESSAGES_PER_SECOND = 30.0  # per bot, all chats together
SLACK_MESSAGES_PER_SECOND_PER_CHANNEL = 1.0
AIM_SHARE = 0.05

TAGS = [
    "rollout", "sglang", "vllm", "trainer", "fix", "feat", "refactor", "perf", "docs", "ci",
    "ckpt", "megatron", "fsdp", "lora", "breaking", "reward", "data", "algo", "misc", "test",
]  # fmt: skip
REPOS = ["verl-project/verl", "sgl-project/sglang", "vllm-project/vllm"]
FLAGS = [f"风险标记 {n}" for n in range(30)] + [f"risk flag {n}" for n in range(10)]


def sample_reports() -> list[Report]:
    paths = [ROOT / "tests" / "data" / "003_ccacf97c43044eb5.txt"]
    paths += sorted(p for p in (ROOT / "examples" / "reports").glob("*") if p.is_file())
    return [parse_file(path).report for path in paths]


def make_reports(count: int, rng: random.Random) -> list[StoredReport]:
    """`count` new reports, varied from the samples: numbers, tags, impact, flags, level."""
    samples = sample_reports()
    items: list[StoredReport] = []
    for seq in range(1, count + 1):
        base = rng.choice(samples)
        level = RecommendationLevel.MUST_READ if rng.random() < 0.2 else RecommendationLevel.READ
        report = base.model_copy(
            update={
                "repo": rng.choice(REPOS),
                "number": 10_000 + seq,
                "title": f"{base.title} ({seq})",
                "tags": rng.sample(TAGS, rng.randint(1, 3)),
                "impact_level": rng.choice([None, *ImpactLevel]),
                "risk_flags": rng.sample(FLAGS, rng.randint(0, 4)),
                "recommendation_level": level,
                "merged_at": (base.merged_at or None) and base.merged_at + timedelta(hours=seq),
            }
        )
        items.append(StoredReport(report, seq, revision=1 + (rng.random() < 0.1)))
    return items


def make_channels(count: int, rng: random.Random) -> list[tuple[str, DigestFilter, Format, Locale]]:
    channels = []
    for index in range(count):
        flt = DigestFilter(
            repos=(rng.choice(REPOS),) if rng.random() < 0.3 else (),
            tags=tuple(rng.sample(TAGS, rng.randint(0, 3))),
            exclude_tags=tuple(rng.sample(TAGS, rng.randint(0, 1))),
            max_items=rng.choice([10, 20, 30]),
        )
        fmt = Format.SLACK if index % 2 else Format.TELEGRAM
        channels.append((f"channel-{index}", flt, fmt, rng.choice(list(Locale))))
    return channels


def render_all(
    items: Sequence[StoredReport], channels: Sequence[tuple[str, DigestFilter, Format, Locale]]
) -> dict[Format, dict[str, Any]]:
    renderer = Renderer()
    today = date(2026, 8, 18)
    stats: dict[Format, dict[str, Any]] = {
        fmt: {
            "seconds": 0.0,
            "cpu_seconds": 0.0,
            "messages": 0,
            "channels": 0,
            "max_per_channel": 0,
        }
        for fmt in Format
    }
    for _name, flt, fmt, locale in channels:
        started, cpu_started = time.perf_counter(), time.process_time()
        picked = select_new(items, flt, 0)
        digest = build_digest(picked, flt, default_title([flt], picked))
        messages = renderer.digest(digest, fmt, locale, date=today) if not digest.is_empty else []
        row = stats[fmt]
        row["seconds"] += time.perf_counter() - started
        row["cpu_seconds"] += time.process_time() - cpu_started
        row["messages"] += len(messages)
        row["channels"] += 1
        row["max_per_channel"] = max(row["max_per_channel"], len(messages))
    return stats


def run(quick: bool = False) -> dict[str, Any]:
    """Run the benchmark; returns the figures (seconds, messages, sending time, share)."""
    rng = random.Random(7422)
    items = make_reports(500, rng)
    channels = make_channels(1_000 if quick else 10_000, rng)
    stats = render_all(items, channels)
    telegram, slack = stats[Format.TELEGRAM], stats[Format.SLACK]
    telegram_send = telegram["messages"] / TELEGRAM_MESSAGES_PER_SECOND
    slack_send = slack["max_per_channel"] / SLACK_MESSAGES_PER_SECOND_PER_CHANNEL
    render_seconds = telegram["seconds"] + slack["seconds"]
    render_cpu = telegram["cpu_seconds"] + slack["cpu_seconds"]
    send_seconds = max(telegram_send, slack_send)
    return {
        "channels": len(channels),
        "reports": len(items),
        "render_seconds": round(render_seconds, 3),
        "render_cpu_seconds": round(render_cpu, 3),
        "telegram": {
            "channels": telegram["channels"],
            "render_seconds": round(telegram["seconds"], 3),
            "messages": telegram["messages"],
            "send_seconds": round(telegram_send, 1),
        },
        "slack": {
            "channels": slack["channels"],
            "render_seconds": round(slack["seconds"], 3),
            "messages": slack["messages"],
            "send_seconds": round(slack_send, 1),
        },
        "send_seconds": round(send_seconds, 1),
        "share": round(render_seconds / send_seconds, 4) if send_seconds else None,
        "aim": AIM_SHARE,
    }


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="1,000 channels instead of 10,000")
    parser.add_argument("--json", action="store_true", help="print the figures as JSON")
    args = parser.parse_args(argv)
    result = run(quick=args.quick)
    if args.json:
        print(json.dumps(result, indent=2))
        return 0
    tg, sl = result["telegram"], result["slack"]
    print(f"{result['channels']:,} channels × {result['reports']} new reports")
    print(
        f"  telegram: {tg['channels']:,} digests rendered in {tg['render_seconds']:.2f} s → "
        f"{tg['messages']:,} messages; at 30/s sending needs {tg['send_seconds']:,.0f} s"
    )
    print(
        f"  slack:    {sl['channels']:,} digests rendered in {sl['render_seconds']:.2f} s → "
        f"{sl['messages']:,} messages; at 1/s per channel the longest needs "
        f"{sl['send_seconds']:,.0f} s"
    )
    share = result["share"]
    verdict = "ok" if share is not None and share <= AIM_SHARE else "over the aim"
    print(
        f"  rendering {result['render_seconds']:.2f} s ({result['render_cpu_seconds']:.2f} s CPU)"
        f" vs sending {result['send_seconds']:,.0f} s: {share:.1%}"
        f" (aim ≤ {AIM_SHARE:.0%}: {verdict})"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
