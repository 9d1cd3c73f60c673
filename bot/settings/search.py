"""`search:` the budget of every query a chat or the CLI asks (`/pr find`, `subscribe`,
`subscribe test`): how long it may run, and how many run at once.

A query past `timeout_seconds` is stopped (PostgreSQL's statement_timeout, SQLite's progress
handler) and answered "this query took too long, narrow it"; past `max_concurrent` searches in
the process, or `max_per_user` of one person's, a search is refused at once as busy instead of
waiting behind the others. The number of terms in a query is the parser's (64).
"""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field


class SearchConfig(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")

    timeout_seconds: float = Field(5.0, gt=0, le=300)  # one query's time, all its statements
    max_concurrent: int = Field(4, ge=1, le=256)  # searches running at once, per process
    max_per_user: int = Field(1, ge=1, le=256)  # one person's searches running at once
