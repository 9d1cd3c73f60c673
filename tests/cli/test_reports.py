"""`prdigest ingest`, `pr`, `tags test`, `schema`, `check-config` as a user runs them."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from bot.cli import main
from tests.kits.paths import ROOT, SEED

FLAGS = ["移除隐式配置兜底", "standalone 需显式 auto", "FP8 例外一并删除", "多后端行为一致性"]


pytestmark = pytest.mark.usefixtures("private_store")


def test_seed_report_round_trips_through_ingest_and_pr_json(
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert main(["ingest", str(SEED)]) == 0
    assert capsys.readouterr().out.strip().endswith("1 new, 0 updated, 0 unchanged, 0 failed")
    assert main(["pr", "7422", "--format", "json"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["repo"] == "verl-project/verl"
    assert report["title"] == "[rollout] fix: preserve dummy load_format in disaggregated rollout"
    assert report["summary"] == "移除 dummy 格式覆盖，修复分离式 rollout 权重广播"
    assert report["recommendation_level"] == "must_read"
    assert report["impact_level"] == "medium"
    assert report["risk_flags"] == FLAGS
    files = report["key_files"]
    assert len(files) == 7
    assert files[0] == {
        "path": "verl/workers/rollout/sglang_rollout/async_sglang_server.py",
        "module": "异步服务",
        "category": "source",
        "kind": "core-logic",
        "symbols": ["SGLangHttpServer.__init__"],
        "note": files[0]["note"],
    }
    assert files[0]["note"].startswith("PR 核心修复对象")
    assert files[4]["symbols"] == ["init_config", "test_standalone_rollout"]
    assert all(f["module"] and f["category"] and f["kind"] for f in files)
    assert [r["number"] for r in report["related"]] == [7434, 7413, 7291]
    assert {"rollout", "fix"} <= set(report["tags"])


@pytest.mark.parametrize(
    "ref",
    ["7422", "#7422", "verl-project/verl#7422", "http://prhub.com.cn/verl-project/verl/pull/7422"],
)
def test_pr_accepts_every_ref_form(ref: str, capsys: pytest.CaptureFixture[str]) -> None:
    main(["ingest", "-q", str(SEED)])
    capsys.readouterr()
    assert main(["pr", ref, "--format", "json"]) == 0
    assert json.loads(capsys.readouterr().out)["number"] == 7422


def test_ambiguous_number_lists_the_candidates(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    other = tmp_path / "vllm.md"
    other.write_text(
        SEED.read_text(encoding="utf-8").replace("verl-project/verl", "vllm-project/vllm"),
        encoding="utf-8",
    )
    main(["ingest", "-q", str(SEED), str(other)])
    capsys.readouterr()
    assert main(["pr", "7422"]) == 2
    err = capsys.readouterr().err
    assert "verl-project/verl#7422" in err
    assert "vllm-project/vllm#7422" in err
    assert main(["pr", "vllm-project/vllm#7422", "--format", "json"]) == 0


@pytest.mark.parametrize(("ref", "message"), [("99999999", "no report"), ("7422abc", "not a PR")])
def test_unknown_or_malformed_ref_is_a_clear_error(
    ref: str, message: str, capsys: pytest.CaptureFixture[str]
) -> None:
    main(["ingest", "-q", str(SEED)])  # a database to look in (`pr` creates none)
    assert main(["pr", ref]) == 2
    assert message in capsys.readouterr().err


def test_ingest_reports_bad_files_by_name_and_keeps_the_rest(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    folder = tmp_path / "reports"
    folder.mkdir()
    shutil.copy(SEED, folder / "good.md")
    (folder / "notes.md").write_text("# just some notes\n\nno PR here\n", encoding="utf-8")
    (folder / "broken.json").write_text("{not json", encoding="utf-8")
    (folder / "image.png").write_bytes(b"\x89PNG")
    code = main(["ingest", str(folder), str(tmp_path / "missing.md")])
    captured = capsys.readouterr()
    assert code == 1
    assert captured.out.strip().endswith("1 new, 0 updated, 0 unchanged, 3 failed")
    assert "notes.md" in captured.err
    assert "broken.json" in captured.err
    assert "missing.md: no such file or directory" in captured.err
    assert "image.png" not in captured.err
    assert main(["pr", "7422", "--format", "json"]) == 0


def test_reingest_after_edit_counts_as_updated(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    copy = tmp_path / "r.md"
    shutil.copy(SEED, copy)
    main(["ingest", "-q", str(copy)])
    main(["ingest", "-q", str(copy)])
    copy.write_text(copy.read_text(encoding="utf-8").replace("影响程度：中", "影响程度：高"))
    main(["ingest", "-q", str(copy)])
    lines = capsys.readouterr().out.strip().splitlines()
    assert lines == [
        "1 new, 0 updated, 0 unchanged, 0 failed",
        "0 new, 0 updated, 1 unchanged, 0 failed",
        "0 new, 1 updated, 0 unchanged, 0 failed",
    ]


def test_tags_test_prints_one_json_line_per_title(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["tags", "test", "[BREAKING][trainer, fsdp] feat: x", "fix(api)!: y"]) == 0
    lines = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert lines == [
        {
            "title": "[BREAKING][trainer, fsdp] feat: x",
            "tags": ["trainer", "fsdp", "feat", "breaking"],
        },
        {"title": "fix(api)!: y", "tags": ["fix", "api", "breaking"]},
    ]


def test_schema_describes_every_report_key(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["schema"]) == 0
    schema = json.loads(capsys.readouterr().out)
    for key in ("repo", "number", "key_files", "risk_flags", "related", "tags", "impact_level"):
        assert key in schema["properties"]


def test_check_config_names_the_bad_key(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    bad = tmp_path / "bot.yaml"
    bad.write_text(
        "channels:\n  - name: a\n    platform: console\n    target: stdout\n    tagz: [x]\n"
    )
    monkeypatch.setenv("BOT_CONFIG", str(bad))
    assert main(["check-config"]) == 2
    assert "channels.a.tagz: unknown key; did you mean 'tags'?" in capsys.readouterr().err


def test_check_config_accepts_the_example_without_its_slack_channel(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("BOT_CONFIG", str(ROOT / "config" / "bot.example.yaml"))
    assert main(["check-config"]) == 2
    assert "SLACK_BOT_TOKEN is not set" in capsys.readouterr().err
    monkeypatch.setenv("SLACK_BOT_TOKEN", "xoxb-1-2")
    monkeypatch.setenv("SLACK_SIGNING_SECRET", "s")
    assert main(["check-config"]) == 0
    out = capsys.readouterr().out
    assert "verl-daily" in out
    assert "xoxb-1-2" not in out
