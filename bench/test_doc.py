"""`make bench` writes docs/benchmarks.md from its figures: every headline, its aim, met or not."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest

from bench import cpu, plan
from bench.__main__ import publish, summary_rows, write_doc

INFO = {
    "date": "2026-12-03 08:00 UTC",
    "cpus": "2",
    "python": "3.11.7",
    "platform": "Linux",
    "sqlite": "3.40.1",
    "postgresql": "not used",
}


def _server(p99: float) -> dict[str, Any]:
    return {
        "requests": 2400,
        "errors": 0,
        "p50_ms": 40.0,
        "p99_ms": p99,
        "max_ms": 99.0,
        "per_s": 1000.0,
    }


def _fanout(rate_ratio: float, violations: int) -> dict[str, Any]:
    row = {
        "messages": 19091,
        "seconds": 330.0,
        "achieved_per_s": 60 * rate_ratio,
        "rate_ratio": rate_ratio,
        "violations": violations,
        "lost": 0,
        "duplicates": 0,
    }
    return {
        **row,
        "ptb": {**row, "rate_ratio": 0.45},
        "ptb_rate_ratio": 0.45,
        "chats": 10000,
        "reports": 500,
        "time_scale": 0.5,
        "allowed_per_s": 60.0,
        "plan_digest_ms": 6.0,
        "plan_seconds": 60.0,
        "aim": 0.95,
    }


def results(p99_ratio: float, rate_ratio: float, violations: int) -> dict[str, Any]:
    return {
        "command_latency": {
            "bot": _server(40.0 * p99_ratio),
            "peer": _server(40.0),
            "reports": 100000,
            "clients": 50,
            "p50_ratio": 1.0,
            "p99_ratio": p99_ratio,
            "aim": 1.2,
            "rounds": 4,
            "answered": 2500,
            "bot_commands": 2500,
        },
        "fanout": _fanout(rate_ratio, violations),
        "ingest": {"error": "Traceback: boom"},
    }


def test_every_headline_stands_beside_its_aim_and_a_missed_aim_says_no() -> None:
    met = "\n".join(summary_rows(results(p99_ratio=1.1, rate_ratio=0.98, violations=0)))
    assert "| `/pr` ack p99 ÷ bare bolt | 1.10× | ≤ 1.2× | yes |" in met
    assert "| fan-out rate ÷ allowed | 0.980 | ≥ 0.95 | yes |" in met
    assert "| fan-out 429s provoked | 0 | 0 | yes |" in met
    assert "| PTB `AIORateLimiter` rate ÷ allowed | 0.450 | (peer) | — |" in met

    missed = "\n".join(summary_rows(results(p99_ratio=1.5, rate_ratio=0.9, violations=3)))
    assert "| `/pr` ack p99 ÷ bare bolt | 1.50× | ≤ 1.2× | **no** |" in missed
    assert "| fan-out rate ÷ allowed | 0.900 | ≥ 0.95 | **no** |" in missed
    assert "| fan-out 429s provoked | 3 | 0 | **no** |" in missed


def test_the_doc_has_the_machine_the_command_each_section_and_a_failed_benchmark(
    tmp_path: Path,
) -> None:
    doc = tmp_path / "benchmarks.md"
    write_doc(results(1.1, 0.98, 0), INFO, doc)
    text = doc.read_text(encoding="utf-8")
    assert "on 2 CPUs, Python 3.11.7, SQLite 3.40.1" in text
    assert "Reproduce: `make bench`" in text
    assert "## Command latency: `/pr 7422`, 100,000 reports, 50 concurrent clients" in text
    assert "## Fan-out: 10,000 Telegram subscriptions, 500 new reports" in text
    assert "## ingest: failed" in text and "Traceback: boom" in text


def test_a_quick_run_prints_its_table_and_leaves_the_page_alone(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    doc = tmp_path / "benchmarks.md"
    doc.write_text("the last full run's figures", encoding="utf-8")
    assert not publish(results(1.1, 0.98, 0), INFO, full=False, doc=doc)
    assert doc.read_text(encoding="utf-8") == "the last full run's figures"
    assert "| fan-out rate ÷ allowed | 0.980 | ≥ 0.95 | yes |" in capsys.readouterr().out
    assert publish(results(1.1, 0.98, 0), INFO, full=True, doc=doc)
    assert doc.read_text(encoding="utf-8").startswith("# Benchmarks")


def _search(p99: float, p99_pg: float | None) -> dict[str, Any]:
    query = {"total": 1200, "p50_ms": 4.0, "p99_ms": p99, "first_ms": 9.5, "scan_ms": 900.0}
    return {
        "reports": 100000,
        "build_s": 200.0,
        "p50_ms": 4.0,
        "p99_ms": p99,
        "p99_ms_pg": p99_pg,
        "pg_skipped": "no PostgreSQL answered",
        "ratio_vs_scan": 225.0,
        "queries": {"权重": query, "risk:fp8": query},
        "aim_p99_ms": 50.0,
        "aim_ratio": 20.0,
    }


def test_search_figures_stand_beside_their_aims(tmp_path: Path) -> None:
    figures = {**results(1.1, 0.98, 0), "search": _search(12.0, None)}
    rows = "\n".join(summary_rows(figures))
    assert "| search p99, SQLite | 12.0 ms | ≤ 50 ms | yes |" in rows
    assert "| search p99, PostgreSQL | skipped | ≤ 50 ms | — |" in rows
    assert "| search ÷ full scan | 225× | ≥ 20× | yes |" in rows
    missed = "\n".join(summary_rows({"search": _search(80.0, 60.0)}))
    assert "| search p99, SQLite | 80.0 ms | ≤ 50 ms | **no** |" in missed
    assert "| search p99, PostgreSQL | 60.0 ms | ≤ 50 ms | **no** |" in missed
    doc = tmp_path / "benchmarks.md"
    write_doc(figures, INFO, doc)
    text = doc.read_text(encoding="utf-8")
    assert "## Search: 10 queries over 100,000 reports" in text
    assert "| `权重` | 1,200 | 4.0 | 12.0 | 9.5 | — | 900 | 225× |" in text
    assert "PostgreSQL skipped: no PostgreSQL answered" in text


def test_the_recovery_figure_stands_beside_its_aim(tmp_path: Path) -> None:
    figures = {
        "recovery": {
            "claims_resume_s": 0.6,
            "rows_held_at_kill": 4,
            "messages": 16,
            "duplicates": 1,
            "aim_s": 5.0,
        }
    }
    assert "| claims taken over after a kill | 0.60 s | ≤ 5 s | yes |" in summary_rows(figures)
    slow = {"recovery": {**figures["recovery"], "claims_resume_s": 61.0}}
    assert "| claims taken over after a kill | 61.00 s | ≤ 5 s | **no** |" in summary_rows(slow)
    doc = tmp_path / "benchmarks.md"
    write_doc(figures, INFO, doc)
    assert "## Recovery: a replica killed inside a send" in doc.read_text(encoding="utf-8")


def _plan(sqlite_s: float, pg_s: float | None, rss: int) -> dict[str, Any]:
    def backend(seconds: float, server_cpu: float | None) -> dict[str, Any]:
        return {"runs": 100000, "messages": 236688, "seconds": seconds, "per_sub_ms": 0.1,
                "rss_mb": rss, "ticks": [seconds + 1.5, seconds, seconds - 0.5],
                "cpu_s": seconds - 0.5, "server_cpu_s": server_cpu, "first_queued_s": 0.42,
                "reference_s": [0.31, 0.35]}  # fmt: skip

    pg = {"skipped": "no PostgreSQL answered"} if pg_s is None else backend(pg_s, 7.3)
    figures: dict[str, Any] = {"sqlite": backend(sqlite_s, None), "postgresql": pg}
    figures["subscriptions"] = 100000
    figures |= {"seconds_sqlite": sqlite_s, "rss_mb": rss, "per_sub_ms": 0.1}
    return figures if pg_s is None else figures | {"seconds_pg": pg_s}


def test_the_planning_figures_stand_beside_their_aims(tmp_path: Path) -> None:
    met = summary_rows({"plan": _plan(8.4, 9.9, 140)})
    assert "| plan 100,000 subscriptions, SQLite | 8.40 s | ≤ 10 s | yes |" in met
    assert "| plan 100,000 subscriptions, PostgreSQL | 9.90 s | ≤ 10 s | yes |" in met
    assert "| plan peak RSS | 140 MB | ≤ 250 MB | yes |" in met
    missed = summary_rows({"plan": _plan(12.0, None, 300)})
    assert "| plan 100,000 subscriptions, SQLite | 12.00 s | ≤ 10 s | **no** |" in missed
    assert "| plan 100,000 subscriptions, PostgreSQL | skipped | ≤ 10 s | — |" in missed
    assert "| plan peak RSS | 300 MB | ≤ 250 MB | **no** |" in missed
    doc = tmp_path / "benchmarks.md"
    write_doc({"plan": _plan(12.0, None, 300)}, INFO, doc)
    text = doc.read_text(encoding="utf-8")
    assert "## Planning: 100,000 subscriptions due at one tick" in text
    assert "| postgresql | skipped: no PostgreSQL answered |" in text
    row = (
        "| sqlite | 100,000 | 236,688 | 12.00 | 13.50 / 12.00 / 11.50 | 11.5 / — | 0.42 "
        "| 0.31 / 0.35 | 0.100 | 300 |"
    )
    assert row in text
    write_doc({"plan": _plan(8.4, 9.9, 140)}, INFO, doc)
    text = doc.read_text(encoding="utf-8")
    assert "| postgresql | 100,000 | 236,688 | 9.90 | 11.40 / 9.90 / 9.40 | 9.4 / 7.3 |" in text
    assert "CPU s: what the median tick cost in CPU seconds" in text
    assert "Reference: the fastest of three timings of a fixed pure-Python workload" in text


def test_the_next_tick_with_nothing_due_stands_beside_its_aim(tmp_path: Path) -> None:
    figures = _plan(8.4, 9.9, 140)
    figures["sqlite"]["idle_seconds"] = 0.4
    figures["postgresql"]["idle_seconds"] = 2.9
    rows = summary_rows({"plan": figures})
    assert (
        "| a tick with nothing due, 100,000 subscriptions, SQLite | 0.40 s | ≤ 1 s | yes |" in rows
    )
    assert (
        "| a tick with nothing due, 100,000 subscriptions, PostgreSQL | 2.90 s | ≤ 1 s | **no** |"
        in rows
    )
    doc = tmp_path / "benchmarks.md"
    write_doc({"plan": figures}, INFO, doc)
    text = doc.read_text(encoding="utf-8")
    assert "| 0.100 | 140 | 0.40 |" in text
    assert "Next tick: the service's following tick" in text
    skipped = _plan(8.4, None, 140)  # a backend that did not run has no such row
    assert not any("nothing due" in row for row in summary_rows({"plan": skipped}))


def test_the_many_audiences_section_says_what_sending_takes_and_when_the_first_chats_get_theirs(
    tmp_path: Path,
) -> None:
    figures = _plan(8.4, 9.9, 140)
    figures["many"] = _plan(20.0, 17.0, 210) | {"audiences": 10000}
    figures["seconds_10k_audiences_sqlite"] = 20.0
    figures["seconds_10k_audiences_pg"] = 17.0
    figures["rss_mb_10k_audiences"] = 210
    doc = tmp_path / "benchmarks.md"
    write_doc({"plan": figures}, INFO, doc)
    text = doc.read_text(encoding="utf-8")
    # 236,688 messages at 29.7 a second: 7,969 s, 2 h 13 min
    assert "Sending the 236,688 messages this tick queues takes at least 2 h 13 min" in text
    row = "| sqlite | 100,000 | 236,688 | 20.00 | 21.50 / 20.00 / 19.50 | 19.5 / — | 0.42 |"
    assert row in text
    # A tick measured before these columns existed shows dashes in them.
    new = ("reference_s", "first_queued_s")
    older = {key: value for key, value in figures["sqlite"].items() if key not in new}
    assert "| 7.9 / — | — | — | 0.100 |" in plan._rows({**figures, "sqlite": older})[0]


def test_a_full_planning_run_counts_the_median_tick_and_the_highest_peak(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    ticks = iter([(9.8, 150), (11.9, 140), (8.7, 160)])

    def child(backend: str, count: int) -> dict[str, Any]:
        seconds, rss = next(ticks)
        return {"runs": count, "messages": 2 * count, "seconds": seconds, "rss_mb": rss}

    monkeypatch.setattr(plan, "_child", child)
    found = plan._repeated("sqlite", 100, 3)
    assert (found["seconds"], found["ticks"], found["rss_mb"]) == (9.8, [9.8, 11.9, 8.7], 160)


def test_the_feishu_fanout_line_and_the_search_sizes_stand_beside_their_aims(
    tmp_path: Path,
) -> None:
    lark = {**_fanout(0.97, 0), "chats": 2000, "documented_ratio": 0.873, "documented_per_s": 16.7}
    lark |= {"violations": 2, "allowed_per_s": 15.0}
    figures = {"fanout": {**_fanout(0.98, 0), "lark": lark}}
    rows = "\n".join(summary_rows(figures))
    assert "| Feishu fan-out rate ÷ our pace | 0.970 | ≥ 0.95 | yes |" in rows
    assert "| Feishu limit errors | 2 | 0 | **no** |" in rows
    assert "| Feishu lost / duplicated | 0 / 0 | 0 / 0 | yes |" in rows
    doc = tmp_path / "benchmarks.md"
    write_doc(figures, INFO, doc)
    assert "| prdigest outbox + `LarkSender`, 2,000 Feishu groups |" in doc.read_text("utf-8")

    search = {**_search(12.0, 30.0), "p99_ms_pg_1k": 20.0, "p99_ms_pg_10k": 61.0}
    sizes = "\n".join(summary_rows({"search": search | {"p99_ms_pg_100k": None}}))
    assert "| search p99, PostgreSQL, 1,000 reports | 20.0 ms | ≤ 50 ms | yes |" in sizes
    assert "| search p99, PostgreSQL, 10,000 reports | 61.0 ms | ≤ 50 ms | **no** |" in sizes
    assert "| search p99, PostgreSQL, 100,000 reports | not measured | ≤ 50 ms | — |" in sizes


def _latency_phase(idle_p99: float, tick_p99: float) -> dict[str, Any]:
    phase = {"requests": 400, "seconds": 5.0, "p50_ms": 4.6, "max_ms": 20.0, "mean_ms": 5.0}
    return {
        "idle": {**phase, "p99_ms": idle_p99},
        "tick": {**phase, "p99_ms": tick_p99},
        "destinations": 10_000,
        "errors": 0,
        "ratio": round(tick_p99 / idle_p99, 2),
    }


def test_the_planning_latency_shows_the_process_against_its_aim_and_the_loop_beside_it(
    tmp_path: Path,
) -> None:
    figures = {
        "plan_latency": {
            "subscriptions": 100_000,
            "audiences": 10_000,
            "clients": 5,
            "loop": _latency_phase(10.0, 200.0),
            "process": _latency_phase(10.0, 11.0),
            "pr_p99_ratio": 1.1,
            "pr_p99_ratio_loop": 20.0,
            "aim": 1.2,
        }
    }
    rows = "\n".join(summary_rows(figures))
    assert "(10,000 audiences) / idle, planning process | 1.10× | ≤ 1.2× | yes |" in rows
    assert "(10,000 audiences) / idle, planned on the loop | 20.00× | (reference) | — |" in rows
    doc = tmp_path / "benchmarks.md"
    write_doc(figures, INFO, doc)
    text = doc.read_text("utf-8")
    assert "| planning process: during the tick | 400 | 5.0 | 4.60 | 11.00 | 20.0 |" in text
    assert "**p99 1.10× idle while the planning process plans the tick**" in text


def test_the_cpu_readings_count_postgres_processes_only(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    def process(pid: int, cmdline: bytes, utime: int, stime: int) -> None:
        folder = tmp_path / str(pid)
        folder.mkdir()
        (folder / "cmdline").write_bytes(cmdline)
        fields = ["S", "1", "1", "1", "0", "-1", "0", "0", "0", "0", "0", str(utime), str(stime)]
        (folder / "stat").write_text(f"{pid} (a (b) c) " + " ".join(fields) + " 0 0\n")

    monkeypatch.setattr(cpu, "PROC", tmp_path)
    assert cpu.postgres_cpu() is None
    process(10, b"python\x00-m\x00bench", 500, 500)
    (tmp_path / "self").mkdir()
    assert cpu.postgres_cpu() is None
    process(11, b"postgres: 15/main: walwriter", 30, 20)
    process(12, b"postgres: postgres test 127.0.0.1(5) idle", 200, 50)
    hz = os.sysconf("SC_CLK_TCK")
    assert cpu.postgres_cpu() == 300 / hz
    assert cpu.spent(1.0, 3.456) == 2.46
    assert cpu.spent(None, 3.0) is None
    assert cpu.spent(1.0, None) is None
    reference = cpu.reference_seconds(repeats=1)
    assert 0 < reference < 60  # a timing, whatever pace the machine runs at
    before = cpu.process_cpu()
    sum(i * i for i in range(300_000))
    assert cpu.process_cpu() > before
