"""The Report: one PR review report, as parsed from Markdown or JSON.

Every field a team reads in a digest or a `/pr` answer lives here. Derived fields
(`recommendation_level`, `impact_level`, `tags`) are computed by the parser so that a JSON
report and a Markdown report of the same PR give the same object.
"""

from __future__ import annotations

from datetime import datetime
from enum import StrEnum

from pydantic import BaseModel, ConfigDict, Field


class RecommendationLevel(StrEnum):
    """How strongly the report recommends reading the PR, from its lead phrase."""

    MUST_READ = "must_read"
    READ = "read"
    SKIM = "skim"
    SKIP = "skip"


class ImpactLevel(StrEnum):
    """影响程度 高/中/低."""

    HIGH = "high"
    MEDIUM = "medium"
    LOW = "low"


class _Part(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


class KeyFile(_Part):
    """One `关键文件` bullet: a path and what the report says about it."""

    path: str
    module: str | None = None
    category: str | None = None
    kind: str | None = None
    symbols: list[str] = Field(default_factory=list)
    note: str = ""


class Snippet(_Part):
    """One `### path` entry under `关键源码片段`."""

    path: str
    note: str = ""
    language: str = ""
    code: str = ""


class RelatedPR(_Part):
    """One `关联脉络` bullet: `PR #7434 title: relation`."""

    number: int
    title: str = ""
    relation: str = ""


class Report(_Part):
    """A parsed PR review report. `repo` + `number` identify it."""

    repo: str = Field(description="owner/name, e.g. verl-project/verl")
    number: int = Field(ge=1)
    title: str = Field(min_length=1)
    url: str | None = None
    merged_at: datetime | None = None
    summary: str = Field("", description="一句话: the one-line summary")
    recommendation: str = Field("", description="推荐动作, with its numbered sub-items")
    recommendation_level: RecommendationLevel = RecommendationLevel.READ
    motivation: str = ""
    implementation: str = Field("", description="实现拆解 steps, without the key-file list")
    key_files: list[KeyFile] = Field(default_factory=list)
    key_symbols: list[str] = Field(default_factory=list)
    snippets: list[Snippet] = Field(default_factory=list)
    comment_highlights: str = ""
    risks: str = ""
    impact: str = ""
    impact_level: ImpactLevel | None = None
    risk_flags: list[str] = Field(default_factory=list)
    related: list[RelatedPR] = Field(default_factory=list)
    tags: list[str] = Field(default_factory=list)

    @property
    def ref(self) -> str:
        """`owner/repo#number`, how logs and messages name a report."""
        return f"{self.repo}#{self.number}"
