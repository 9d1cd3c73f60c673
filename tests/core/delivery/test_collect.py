"""fewer_collections: the young generation's threshold is raised inside, restored after."""

from __future__ import annotations

import gc

import pytest

from bot.core.delivery.collect import fewer_collections


def test_the_threshold_is_raised_inside_and_restored_after_even_on_error() -> None:
    before = gc.get_threshold()
    with fewer_collections(young=before[0] + 5_000):
        assert gc.get_threshold() == (before[0] + 5_000, *before[1:])
    assert gc.get_threshold() == before
    with pytest.raises(RuntimeError), fewer_collections(young=before[0] + 1):
        raise RuntimeError("planning failed")
    assert gc.get_threshold() == before


def test_a_lower_young_threshold_is_never_imposed() -> None:
    before = gc.get_threshold()
    with fewer_collections(young=1):
        assert gc.get_threshold() == before
