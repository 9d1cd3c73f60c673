"""The Report: one PR review report, as parsed from Markdown or JSON.

Every field a team reads in a digest or a `/pr` answer lives here. Derived fields
(`recommendation_level`, `impact_level`, `tags`) are computed by the parser so that a JSON
report and a Markdown report of the same PR give the same object.
"""

from __future__ import annotations

import re
from datetime import UTC, datetime
from enum import StrEnum
from typing import Annotated, Any, ClassVar, Self

from pydantic import (
    AfterValidator,
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Field,
    ValidationInfo,
    field_validator,
    model_validator,
)
from pydantic_core import PydanticCustomError

# The store's bounds (core/store/sql/tables.py): `number` is an INTEGER, `repo` a VARCHAR(200).
# A report outside them is no report: refused at parse time with the field named, instead of
# failing (and taking a batch of good reports with it) when it is written.
MAX_PR_NUMBER = 2**31 - 1
MAX_REPO_LENGTH = 200
# owner/name as GitHub spells them: letters, digits, `-`, `_`, `.`; one slash, no `..` parts.
REPO_NAME = re.compile(r"[A-Za-z0-9_.-]+/[A-Za-z0-9_.-]+")
# Validation context for what the store already holds: read back as it was written, even if
# it predates these bounds (a digest must not fail on a row ingested by an older version).
STORED = {"stored": True}


def _checking(info: ValidationInfo) -> bool:
    return not (isinstance(info.context, dict) and info.context.get("stored"))


def _no_boolean(value: Any, info: ValidationInfo) -> Any:
    """JSON `true` is not PR #1 (pydantic's lax int would take it)."""
    if isinstance(value, bool) and _checking(info):
        raise PydanticCustomError("pr_number_bool", "a boolean is not a PR number")
    return value


def _in_store_range(value: int, info: ValidationInfo) -> int:
    if value > MAX_PR_NUMBER and _checking(info):
        raise PydanticCustomError(
            "pr_number_range", "a PR number is at most {limit}", {"limit": MAX_PR_NUMBER}
        )
    return value


PRNumber = Annotated[
    int, BeforeValidator(_no_boolean), Field(ge=1), AfterValidator(_in_store_range)
]


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
    # The one fields-set that every stored instance of the class shares (see _share_fields_set).
    _every_field: ClassVar[set[str] | None] = None

    @model_validator(mode="after")
    def _share_fields_set(self, info: ValidationInfo) -> Self:
        """A report read back from the store sets every field (the store writes model_dump
        output), so each of its models would carry its own copy of the same fields-set: about
        a fifth of a stored report's memory, with a digest window holding 2,000 of them. Those
        instances share one set per class instead; frozen models never change it, and a copy
        copies it."""
        fields = self.__pydantic_fields_set__
        cls = type(self)
        if _checking(info) or len(fields) != len(cls.model_fields):
            return self
        shared = cls.__dict__.get("_every_field")
        if shared is None:
            shared = set(cls.model_fields)
            cls._every_field = shared
        object.__setattr__(self, "__pydantic_fields_set__", shared)
        return self


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

    number: PRNumber
    title: str = ""
    relation: str = ""


class Report(_Part):
    """A parsed PR review report. `repo` + `number` identify it."""

    repo: str = Field(description="owner/name, e.g. verl-project/verl")
    number: PRNumber
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

    @field_validator("repo")
    @classmethod
    def _repo_is_owner_name(cls, value: str, info: ValidationInfo) -> str:
        if not _checking(info):
            return value
        if len(value) > MAX_REPO_LENGTH:
            raise PydanticCustomError(
                "repo_length",
                "a repository name is at most {limit} characters, got {length}",
                {"limit": MAX_REPO_LENGTH, "length": len(value)},
            )
        parts = value.split("/")
        if not REPO_NAME.fullmatch(value) or any(part in {".", ".."} for part in parts):
            raise PydanticCustomError(
                "repo_name",
                "expected owner/name (letters, digits, - _ .), got {shown}",
                {"shown": _shown(value)},
            )
        return value

    @field_validator("title")
    @classmethod
    def _title_not_blank(cls, value: str, info: ValidationInfo) -> str:
        if _checking(info) and not value.strip():
            raise PydanticCustomError("blank", "blank (only whitespace)")
        return value

    @field_validator("merged_at")
    @classmethod
    def _merged_at_in_utc_range(
        cls, value: datetime | None, info: ValidationInfo
    ) -> datetime | None:
        if value is None or not _checking(info):
            return value
        try:  # the store keeps UTC: 9999-12-31T23:00-14:00 is in year 10000 there
            (value if value.tzinfo is not None else value.replace(tzinfo=UTC)).astimezone(UTC)
        except OverflowError:
            raise PydanticCustomError(
                "datetime_utc_range", "out of range once converted to UTC"
            ) from None
        return value

    @property
    def ref(self) -> str:
        """`owner/repo#number`, how logs and messages name a report."""
        return f"{self.repo}#{self.number}"


def _shown(value: str, limit: int = 60) -> str:
    """`value` quoted for an error message, cut to `limit` characters."""
    return repr(value if len(value) <= limit else value[:limit] + "…")
