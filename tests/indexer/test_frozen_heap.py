"""The dedup job's frozen heap (issue 28): lexicons out of the collector's reach, for a job only."""

from __future__ import annotations

import gc

import pytest

from indexer.dedup_job import _frozen_heap


def test_what_lives_before_is_frozen_during_and_released_after() -> None:
    gc.unfreeze()
    kept = [[str(i)] for i in range(1000)]  # a lexicon's stand-in
    with _frozen_heap():
        assert gc.get_freeze_count() >= len(kept)
        garbage: list[object] = []
        garbage.append(garbage)  # made inside the job: still collectable
        del garbage
        assert gc.collect() >= 1
    assert gc.get_freeze_count() == 0


def test_released_on_error() -> None:
    with pytest.raises(RuntimeError), _frozen_heap():
        raise RuntimeError("stage failed")
    assert gc.get_freeze_count() == 0
