"""What every command needs: environment, config, database, stores. Opened once per process."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass

from sqlalchemy.ext.asyncio import AsyncEngine

from bot.core.reports.tags import TagRule
from bot.core.store.db import create_engine, migrate
from bot.core.store.reports import ReportStore
from bot.settings import BotConfig, Env, load_config


@dataclass(frozen=True)
class Context:
    env: Env
    config: BotConfig
    engine: AsyncEngine
    reports: ReportStore

    @property
    def tag_rules(self) -> tuple[TagRule, ...]:
        return tag_rules(self.config)


def tag_rules(config: BotConfig) -> tuple[TagRule, ...]:
    return tuple(TagRule(paths=tuple(rule.paths), tag=rule.tag) for rule in config.tag_rules)


def load(env: Env | None = None) -> tuple[Env, BotConfig]:
    env = env or Env.from_environ()
    return env, load_config(env.config_path)


@asynccontextmanager
async def open_context(env: Env | None = None) -> AsyncIterator[Context]:
    """Load config, open the database and apply migrations."""
    env, config = load(env)
    engine = create_engine(env.database_url)
    try:
        await migrate(engine)
        yield Context(env=env, config=config, engine=engine, reports=ReportStore(engine))
    finally:
        await engine.dispose()
