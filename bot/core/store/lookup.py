"""Resolve a PR reference to one stored report, or say why not."""

from __future__ import annotations

from bot.core.digest.select import StoredReport
from bot.core.reports.refs import PRRef
from bot.core.store.reports import ReportStore


class LookupError_(Exception):
    """Base of the two ways a lookup can fail."""


class ReportNotFoundError(LookupError_):
    def __init__(self, ref: PRRef) -> None:
        super().__init__(f"no report for {ref} in the store")
        self.ref = ref


class AmbiguousRefError(LookupError_):
    def __init__(self, ref: PRRef, candidates: list[StoredReport]) -> None:
        refs = ", ".join(c.report.ref for c in candidates)
        super().__init__(f"#{ref.number} exists in several repos: {refs}; name one as owner/repo#N")
        self.ref = ref
        self.candidates = candidates


async def find_report(store: ReportStore, ref: PRRef) -> StoredReport:
    """The one report `ref` names. A repo named without its owner (`verl#7422`, a digest's
    label) is any stored repo of that name: more than one is AmbiguousRefError."""
    if ref.repo is not None and "/" not in ref.repo:
        name = ref.repo.lower()
        found = [
            item
            for item in await store.find(ref.number)
            if item.report.repo.lower().rsplit("/", 1)[-1] == name
        ]
    else:
        found = await store.find(ref.number, ref.repo)
    if not found:
        raise ReportNotFoundError(ref)
    if len(found) > 1:
        raise AmbiguousRefError(ref, found)
    return found[0]
