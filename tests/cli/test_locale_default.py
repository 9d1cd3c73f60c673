"""One locale default serves the CLI and the chats (issue 15): the config's top-level `locale`
(zh unless set) is what `prdigest pr` answers in without --locale, and what a channel without
its own `locale` reads; an explicit value still wins."""

from __future__ import annotations

from pathlib import Path

import pytest

from bot.cli import main
from tests.kits.paths import SEED

_LEGEND_EN = "★ must read · 🔴 high impact · 🟡 medium · ⚪ low · ⚠ risk flags"
_LEGEND_ZH = "★ 必读 · 🔴 高影响 · 🟡 中影响 · ⚪ 低影响 · ⚠ 风险标记"


def _config(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, text: str) -> None:
    path = tmp_path / "bot.yaml"
    path.write_text(text, encoding="utf-8")
    monkeypatch.setenv("BOT_CONFIG", str(path))
    monkeypatch.setenv("BOT_DATABASE_URL", f"sqlite:///{tmp_path / 'bot.db'}")
    for name in ("SLACK_BOT_TOKEN", "TELEGRAM_BOT_TOKEN", "SLACK_APP_TOKEN"):
        monkeypatch.delenv(name, raising=False)


def _pr(capsys: pytest.CaptureFixture[str], *args: str) -> str:
    assert main(["pr", "7422", "risks", *args]) == 0
    return capsys.readouterr().out


def _ingested(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["ingest", "-q", str(SEED)]) == 0
    capsys.readouterr()


@pytest.mark.usefixtures("private_store")
def test_pr_without_locale_answers_in_the_built_in_default_zh(
    capsys: pytest.CaptureFixture[str],
) -> None:
    _ingested(capsys)
    answer = _pr(capsys)
    assert answer == _pr(capsys, "--locale", "zh")
    assert answer != _pr(capsys, "--locale", "en")
    assert "风险" in answer


def test_pr_without_locale_answers_in_the_configs_locale(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    _config(tmp_path, monkeypatch, "locale: en\n")
    _ingested(capsys)
    answer = _pr(capsys)
    assert answer == _pr(capsys, "--locale", "en")
    assert "Risks and impact" in answer
    assert _pr(capsys, "--locale", "zh") != answer  # --locale still wins


def test_an_unknown_section_is_refused_in_the_configs_locale(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    _config(tmp_path, monkeypatch, "locale: zh\n")
    _ingested(capsys)
    assert main(["pr", "7422", "nonsense"]) == 2
    assert capsys.readouterr().err == (
        "prdigest pr: 没有「nonsense」这个章节。可选："
        "summary, risks, files, related, motivation, impl, comments, full。\n"
    )


def _dry_run(capsys: pytest.CaptureFixture[str], channel: str) -> str:
    assert main(["digest", channel, "--dry-run"]) == 0
    return capsys.readouterr().out


def test_a_channel_without_locale_reads_the_configs_and_its_own_wins(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "out.txt"
    _config(
        tmp_path,
        monkeypatch,
        "locale: en\nchannels:\n"
        f"  - {{name: plain, platform: console, target: '{out}'}}\n"
        f"  - {{name: zh-team, platform: console, target: '{out}', locale: zh}}\n",
    )
    _ingested(capsys)
    plain = _dry_run(capsys, "plain").strip().splitlines()
    assert (plain[1], plain[-1]) == ("1 PR", _LEGEND_EN)
    zh_team = _dry_run(capsys, "zh-team").strip().splitlines()
    assert (zh_team[1], zh_team[-1]) == ("1 个 PR", _LEGEND_ZH)
