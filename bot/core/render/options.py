"""How a digest is rendered for one subscription, and the parts a layout posts."""

from __future__ import annotations

from dataclasses import dataclass, field

from bot.core.models import Layout, Verbosity
from bot.core.render.flow import RenderedMessage

ALL_PART = "all"  # the flat layout's one part
SUMMARY_PART = "summary"  # a threaded or topics layout's parent: header, counts, synthesis


@dataclass(frozen=True, slots=True)
class DigestOptions:
    layout: Layout = Layout.FLAT
    verbosity: Verbosity = Verbosity.STANDARD
    synthesis: bool = False  # the weekly synthesis above the groups (cadences over a day)
    more_key: str = ""  # what the "+N more" button carries (the edition id); "": no button


@dataclass(frozen=True, slots=True)
class DigestPart:
    """Messages that go together: the flat layout's whole digest (key ALL_PART), or a threaded
    or topics layout's summary (SUMMARY_PART) and then one part per tag group (key: the tag)."""

    key: str
    label: str  # the group's label (a forum topic's name), or the digest's title
    messages: list[RenderedMessage] = field(default_factory=list)
