"""Platform reachability is in /metrics, one gauge per platform (issue 15); /readyz stays
about the store and the scheduler."""

from __future__ import annotations

from bot.core.delivery.ledger import Claimed
from bot.core.delivery.port import Gone, RetryAfter, Sent, Transient
from bot.core.models import Platform
from bot.web.metrics import Metrics


def _row(platform: Platform) -> Claimed:
    return Claimed(1, None, 1, platform, "C1", 0, {}, 0, 0)


def _gauge(metrics: Metrics, platform: str) -> str:
    prefix = f'prdigest_platform_reachable{{platform="{platform}"}} '
    [line] = [x for x in metrics.render().decode().splitlines() if x.startswith(prefix)]
    return line.removeprefix(prefix)


def test_a_gauge_per_platform_says_whether_its_api_answered() -> None:
    metrics = Metrics()
    metrics.record_delivery(_row(Platform.SLACK), Transient("cannot reach slack.com"), 1.0)
    metrics.record_delivery(_row(Platform.TELEGRAM), RetryAfter(3.0), 1.0)
    assert (_gauge(metrics, "slack"), _gauge(metrics, "telegram")) == ("0.0", "1.0")
    metrics.record_delivery(_row(Platform.SLACK), Gone("channel_not_found"), 2.0)
    assert _gauge(metrics, "slack") == "1.0", "an error answer is an answer"
    metrics.record_delivery(_row(Platform.SLACK), Sent("1"), 3.0)
    assert _gauge(metrics, "slack") == "1.0"
