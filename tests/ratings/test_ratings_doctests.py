"""The examples in the ratings docstrings run and hold."""

from __future__ import annotations

import doctest
from types import ModuleType

import pytest

from arena.ratings import bootstrap, elo, results


@pytest.mark.parametrize("module", [results, elo, bootstrap], ids=lambda m: m.__name__)
def test_docstring_examples(module: ModuleType) -> None:
    outcome = doctest.testmod(module, optionflags=doctest.ELLIPSIS)
    assert outcome.attempted > 0
    assert outcome.failed == 0
