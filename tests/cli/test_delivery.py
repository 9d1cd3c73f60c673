"""`prdigest digest`, `status` and `reactivate` as an operator runs them."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from bot.cli import main
from tests.kits.paths import ROOT


@pytest.fixture(autouse=True)
def console_out(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    out = tmp_path / "digest.txt"
    config = tmp_path / "bot.yaml"
    config.write_text(
        "channels:\n"
        f"  - {{name: team, platform: console, target: '{out}', locale: en, tags: [rollout]}}\n",
        encoding="utf-8",
    )
    monkeypatch.setenv("BOT_CONFIG", str(config))
    monkeypatch.setenv("BOT_DATABASE_URL", f"sqlite:///{tmp_path / 'bot.db'}")
    return out


def test_dry_run_prints_and_changes_nothing(
    capsys: pytest.CaptureFixture[str], console_out: Path
) -> None:
    main(["ingest", "-q", str(ROOT / "examples" / "reports")])
    capsys.readouterr()
    for _ in range(2):
        assert main(["digest", "team", "--dry-run"]) == 0
        text = capsys.readouterr().out
        assert "#7422" in text and "#9087" not in text, "only the rollout tag"
    assert main(["digest", "team", "--dry-run", "--format", "telegram"]) == 0
    payloads = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert payloads and all(p["parse_mode"] == "HTML" for p in payloads)
    assert not console_out.exists()


def test_digest_delivers_then_has_nothing_new(
    capsys: pytest.CaptureFixture[str], console_out: Path
) -> None:
    main(["ingest", "-q", str(ROOT / "examples" / "reports")])
    assert main(["digest", "team"]) == 0
    assert "1/1 messages delivered" in capsys.readouterr().out
    assert "#7422" in console_out.read_text(encoding="utf-8")
    assert main(["digest", "team"]) == 0
    assert "nothing new" in capsys.readouterr().out
    assert main(["status", "--format", "json"]) == 0
    [state] = json.loads(capsys.readouterr().out)
    assert state["destination"] == "team"
    assert (state["pending"], state["failed"], state["active"]) == (0, 0, True)


def test_a_deactivated_destination_is_explained_and_can_be_reactivated(
    capsys: pytest.CaptureFixture[str],
) -> None:
    import asyncio

    from bot.core.store.subscriptions import SubscriptionStore
    from bot.core.store.subscriptions.destination_store import DestinationStore
    from bot.service.context import open_context

    async def deactivate() -> None:
        async with open_context() as ctx:
            [dest] = await SubscriptionStore(ctx.engine).sync_config(ctx.config)
            await DestinationStore(ctx.engine).set_active(
                dest.destination_id, False, "channel_not_found"
            )

    asyncio.run(deactivate())
    assert main(["status"]) == 0
    out = capsys.readouterr().out
    assert "DEACTIVATED (channel_not_found)" in out
    assert "prdigest reactivate team" in out
    assert main(["digest", "team"]) == 2
    assert "deactivated: channel_not_found" in capsys.readouterr().err
    assert main(["reactivate", "team"]) == 0
    assert "reactivated" in capsys.readouterr().out
    assert main(["reactivate", "nope"]) == 2


def test_an_unknown_channel_lists_the_known_ones(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["digest", "nope", "--dry-run"]) == 2
    assert "no channel named 'nope' (known: team)" in capsys.readouterr().err
