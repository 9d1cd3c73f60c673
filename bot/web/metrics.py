"""Prometheus metrics, one registry per process (so tests can build several apps)."""

from __future__ import annotations

from prometheus_client import CollectorRegistry, Counter, Gauge, generate_latest

from bot.core.delivery.ledger import Claimed
from bot.core.delivery.port import (
    Blocked,
    Gone,
    Moved,
    Outcome,
    Rejected,
    RetryAfter,
    Sent,
    Transient,
)


class Metrics:
    def __init__(self) -> None:
        self.registry = CollectorRegistry()
        self.reports_ingested = Counter(
            "prdigest_reports_ingested_total",
            "Reports ingested, by outcome (new, updated, unchanged, failed)",
            ["outcome"],
            registry=self.registry,
        )
        self.digests_run = Counter(
            "prdigest_digests_run_total",
            "Digest runs planned, by status (pending, empty)",
            ["status"],
            registry=self.registry,
        )
        self.messages_sent = Counter(
            "prdigest_messages_sent_total",
            "Messages delivered",
            ["platform"],
            registry=self.registry,
        )
        self.messages_retried = Counter(
            "prdigest_messages_retried_total",
            "Sends rescheduled (rate limits, 5xx, timeouts, blocked, moved)",
            ["platform", "reason"],
            registry=self.registry,
        )
        self.messages_failed = Counter(
            "prdigest_messages_failed_total",
            "Messages failed for good or dropped with a deactivated destination",
            ["platform"],
            registry=self.registry,
        )
        self.outbox_depth = Gauge(
            "prdigest_outbox_depth", "Messages pending or being sent", registry=self.registry
        )
        self.platform_reachable = Gauge(
            "prdigest_platform_reachable",
            "1 when the platform's API answered the last send (even with an error or a 429), "
            "0 when it could not be reached (network, timeout, 5xx)",
            ["platform"],
            registry=self.registry,
        )
        self.last_success = Gauge(
            "prdigest_last_success_timestamp_seconds",
            "When a message last reached each destination (Unix time)",
            ["destination"],
            registry=self.registry,
        )

    def record_delivery(self, row: Claimed, outcome: Outcome, at: float) -> None:
        platform = row.platform.value
        reached = not isinstance(outcome, Transient)
        self.platform_reachable.labels(platform).set(1 if reached else 0)
        match outcome:
            case Sent():
                self.messages_sent.labels(platform).inc()
                self.last_success.labels(f"{platform}:{row.target}").set(at)
            case RetryAfter():
                self.messages_retried.labels(platform, "rate_limited").inc()
            case Transient():
                self.messages_retried.labels(platform, "transient").inc()
            case Blocked():
                self.messages_retried.labels(platform, "blocked").inc()
            case Moved():
                self.messages_retried.labels(platform, "moved").inc()
            case Gone() | Rejected():
                self.messages_failed.labels(platform).inc()

    def render(self) -> bytes:
        data: bytes = generate_latest(self.registry)
        return data
