"""A config channel's `query:` (issue 16): accepted beside repos/tags/exclude_tags and ANDed
with them, checked when the config is loaded (the QueryError line under the key), printed by
check-config, stored with the destination, and read by a digest end to end."""

from __future__ import annotations

from pathlib import Path

import pytest

from bot.cli import main
from bot.core.digest.select import DigestFilter
from bot.core.models import Platform
from bot.core.query import unparse
from bot.core.reports.model import Report
from bot.core.store.reports import ReportStore
from bot.core.store.sql.db import create_engine, migrate
from bot.core.store.subscriptions import SubscriptionStore, filter_to_json
from bot.settings import ConfigError, load_config
from tests.kits.paths import ROOT

SAMPLES = ROOT / "examples" / "reports"


def _config(tmp_path: Path, **keys: str) -> Path:
    lines = [
        "channels:",
        "  - name: verl-daily",
        "    platform: console",
        "    target: stdout",
        *(f"    {key}: {value}" for key, value in keys.items()),
    ]
    path = tmp_path / "bot.yaml"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def test_a_query_is_accepted_beside_the_other_filters_and_anded_with_them(
    tmp_path: Path,
) -> None:
    path = _config(
        tmp_path, repos="[verl-project/verl]", tags="[rollout]", query="'risk:fp8 OR impact>=high'"
    )
    [channel] = load_config(path).channels
    assert channel.query == "risk:fp8 OR impact>=high"
    flt = channel.digest_filter()
    assert flt.query == channel.query
    assert flt.query_ast is not None
    assert unparse(flt.query_ast) == "repo:verl-project/verl tag:rollout (risk:fp8 OR impact>=high)"


@pytest.mark.parametrize(
    ("query", "line"),
    [
        (
            "'rsk:fp8'",
            "channels.verl-daily.query: query: unknown field 'rsk' at 1 (did you mean risk?)",
        ),
        ("''", "channels.verl-daily.query: query: empty"),
        ("'(tag:rollout'", "channels.verl-daily.query: query: unclosed '(' at 1"),
        (
            "'since:2026-13-01'",
            "channels.verl-daily.query: query: bad date '2026-13-01' at 7 "
            "(use 7d, 2w or 2026-11-01)",
        ),
    ],
)
def test_a_bad_query_is_named_under_its_key_word_for_word(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    query: str,
    line: str,
) -> None:
    path = _config(tmp_path, query=query)
    with pytest.raises(ConfigError) as caught:
        load_config(path)
    assert str(caught.value) == f"invalid config {path}:\n  {line}"
    monkeypatch.setenv("BOT_CONFIG", str(path))
    assert main(["check-config"]) == 2
    assert capsys.readouterr().err == f"prdigest check-config: invalid config {path}:\n  {line}\n"


def test_an_empty_repo_is_refused(tmp_path: Path) -> None:
    path = _config(tmp_path, repos="['verl-project/verl', ' ']")
    with pytest.raises(ConfigError) as caught:
        load_config(path)
    assert str(caught.value) == (
        f"invalid config {path}:\n  channels.verl-daily.repos.1: "
        "empty repo (use owner/name, or a name: verl-project/verl, verl)"
    )


@pytest.mark.usefixtures("private_store")
def test_check_config_prints_the_query_each_channel_reads(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    path = _config(
        tmp_path,
        repos="[verl-project/verl]",
        tags="[rollout, sglang]",
        exclude_tags="[ci]",
        query="'risk:FP8 OR impact>=high'",
    )
    monkeypatch.setenv("BOT_CONFIG", str(path))
    assert main(["check-config"]) == 0
    lines = capsys.readouterr().out.splitlines()
    at = next(n for n, line in enumerate(lines) if line.startswith("channel:   verl-daily"))
    assert lines[at + 1] == (
        "  query:   repo:verl-project/verl (tag:rollout OR tag:sglang) -tag:ci "
        "(risk:fp8 OR impact>=high)"
    )


async def test_the_destination_keeps_the_query_and_a_filter_without_one_stores_none(
    tmp_path: Path,
) -> None:
    config = load_config(_config(tmp_path, tags="[rollout]", query="'权重 -tag:ci'"))
    engine = create_engine(f"sqlite:///{tmp_path / 'bot.db'}")
    try:
        await migrate(engine)
        store = SubscriptionStore(engine)
        await store.sync_config(config)
        dest = (await store.of(Platform.CONSOLE, "stdout"))[0]
        assert dest is not None
        assert dest.filter == DigestFilter(tags=("rollout",), query="权重 -tag:ci")
    finally:
        await engine.dispose()
    assert "query" not in filter_to_json(DigestFilter(tags=("rollout",)))


@pytest.mark.usefixtures("private_store")
def test_a_digest_reads_the_channels_query_end_to_end(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """verl reports that mention 权重, but not the high-impact one: only #7422 of the six."""
    assert main(["ingest", str(SAMPLES)]) == 0
    path = _config(tmp_path, repos="[verl-project/verl]", query="'权重 -impact:high'")
    monkeypatch.setenv("BOT_CONFIG", str(path))
    capsys.readouterr()
    assert main(["digest", "verl-daily", "--dry-run"]) == 0
    out = capsys.readouterr().out
    assert "#7422" in out
    for other in ("#7458", "#7501", "#9087", "#9132", "#24817"):
        assert other not in out


async def test_bare_words_that_name_a_known_tag_read_as_tags(tmp_path: Path) -> None:
    """`rollout -ci` in a config's `query:` means the tags, as `subscribe` reads it: `ci` is a
    tag a stored report carries, `sglang` one a tag rule gives; `"rollout"` stays the text."""
    path = _config(tmp_path, query="'rollout -ci sglang \"rollout\" weight'")
    text = path.read_text(encoding="utf-8")
    rules = "tag_rules:\n  - {paths: ['python/sglang/**'], tag: sglang}\n"
    path.write_text(rules + text, encoding="utf-8")
    config = load_config(path)
    engine = create_engine(f"sqlite:///{tmp_path / 'bot.db'}")
    try:
        await migrate(engine)
        reports = ReportStore(engine)
        for number, tags in ((1, ["rollout"]), (2, ["ci"])):
            await reports.upsert(Report(repo="o/r", number=number, title="t", tags=tags), "")
        store = SubscriptionStore(engine)
        await store.sync_config(config)
        [sub] = await store.named("verl-daily")
        assert sub.filter.query == 'tag:rollout -tag:ci tag:sglang "rollout" weight'
    finally:
        await engine.dispose()


@pytest.mark.usefixtures("private_store")
def test_check_config_reads_the_tag_rules_tags(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    path = _config(tmp_path, query="'sglang -ci'")
    rules = "tag_rules:\n  - {paths: ['python/sglang/**'], tag: sglang}\n"
    path.write_text(rules + path.read_text(encoding="utf-8"), encoding="utf-8")
    monkeypatch.setenv("BOT_CONFIG", str(path))
    assert main(["check-config"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert "  query:   tag:sglang -ci" in lines
