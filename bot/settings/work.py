"""`chat_work:` how much chat work (command answers) each platform takes on at once.

Beyond these bounds a request is answered "busy, try again in a minute" at once instead of
waiting (bot/adapters/work.py); the defaults serve a team's use with no wait and keep a
flood's backlog to a few seconds of work.
"""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field


class ChatWorkConfig(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")

    queue_length: int = Field(32, ge=1, le=10_000)  # answers waiting, per platform
    workers: int = Field(8, ge=1, le=256)  # answers running at once, per platform
    per_user_burst: int = Field(10, ge=1, le=1_000)  # answers one user may ask for at once
    per_user_per_minute: float = Field(30.0, gt=0, le=60_000)  # and then this many a minute
