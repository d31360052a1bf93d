"""The browser tests' Chromium: Debian's ``/usr/bin/chromium`` driven by Playwright, one browser per
test module (module scope: Playwright's sync API keeps an event loop running in the main thread,
which would break ``asyncio.run()`` in tests of other packages were it held for the session)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from .playkit import CHROMIUM, CHROMIUM_ARGS


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    if not CHROMIUM.exists():
        pytest.skip("Debian's chromium is not installed (./dev test installs it as root)")
    from playwright.sync_api import sync_playwright

    with sync_playwright() as pw:
        b = pw.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS)
        yield b
        b.close()
