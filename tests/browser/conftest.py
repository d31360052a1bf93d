"""The browser tests' Chromium: Debian's ``/usr/bin/chromium`` driven by Playwright, one browser per
test module (module scope: Playwright's sync API keeps an event loop running in the main thread,
which would break ``asyncio.run()`` in tests of other packages were it held for the session)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from .playkit import chromium


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    with chromium() as b:
        yield b
