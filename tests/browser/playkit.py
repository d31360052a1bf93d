"""Support for the play-page browser tests: ``arena play`` as a real process, Debian's Chromium
driven by Playwright, and a person who plays by clicks alone."""

from __future__ import annotations

import contextlib
import os
import random
import re
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[2]
ARENA = [str(Path(sys.executable).with_name("arena"))]
CHROMIUM = Path("/usr/bin/chromium")
CHROMIUM_ARGS = [
    "--headless=new",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]
URL_RE = re.compile(r"play in your browser: (http://\S+)")


@contextlib.contextmanager
def chromium() -> Iterator[Any]:
    """Debian's Chromium, headless, launched by Playwright's sync API and closed afterwards; the
    test is skipped when it is not installed (``./dev test`` installs it as root).  The browser
    fixtures of ``tests/browser`` and ``tests/web`` both use it."""
    import pytest

    if not CHROMIUM.exists():
        pytest.skip("Debian's chromium is not installed (./dev test installs it as root)")
    from playwright.sync_api import sync_playwright

    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS)
        try:
            yield browser
        finally:
            browser.close()


@dataclass
class Played:
    """An ``arena play`` process and the page's address."""

    proc: subprocess.Popen[str]
    url: str
    home: Path
    lines: list[str]

    @property
    def base(self) -> str:
        return self.url.split("/play/")[0]

    def wait(self, timeout: float = 60.0) -> int:
        """Wait for the process to end; its exit status (its output is kept in :attr:`lines`)."""
        out, _ = self.proc.communicate(timeout=timeout)
        self.lines.extend(out.splitlines())
        return self.proc.returncode

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(10)


def start_play(home: Path, *args: str, name: str = "tester") -> Played:
    """Start ``arena play ARGS`` (unsandboxed bots, a free port, no animation delay) in ``home``."""
    env = {**os.environ, "ARENA_HOME": str(home), "COLUMNS": "120"}
    env.pop("ARENA_DATABASE_URL", None)
    cmd = [*ARENA, "play", "--no-sandbox", "--port", "0", "--pace", "0", "--name", name, *args]
    proc = subprocess.Popen(
        cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, env=env, cwd=str(home)
    )
    lines: list[str] = []
    deadline = time.monotonic() + 60
    assert proc.stdout is not None
    while time.monotonic() < deadline:
        line = proc.stdout.readline()
        if not line:
            break
        lines.append(line.rstrip("\n"))
        m = URL_RE.search(line)
        if m:
            return Played(proc, m.group(1), home, lines)
    proc.kill()
    raise AssertionError("arena play printed no URL:\n" + "\n".join(lines))


DECIDE_OR_OVER = """(prev) => {
  const p = document.getElementById('play-panel');
  return p && (p.dataset.state === 'over' || (p.dataset.state === 'decide' && p.dataset.request !== prev));
}"""


def play_by_clicks(page: Any, rng: random.Random, *, limit: int = 2000, stop_after: int | None = None) -> int:
    """Play the page's seat by clicks alone until the game is over (or ``stop_after`` decisions);
    return the number of decisions made.  Setup and action: a highlighted lounger on the board,
    mostly one that scores most (or Pass when none); roll: sometimes dice and Keep, else Stop."""
    seen = ""
    panel = page.locator("#play-panel")
    for made in range(limit):
        page.wait_for_function(DECIDE_OR_OVER, arg=seen, timeout=60_000)
        if panel.get_attribute("data-state") == "over":
            return made
        if stop_after is not None and made >= stop_after:
            return made
        seen = panel.get_attribute("data-request") or ""
        phase = panel.get_attribute("data-phase")
        if phase == "roll":
            dice = page.locator("#play-dice button.die-btn:not([disabled])")
            if dice.count() and rng.random() < 0.4:
                dice.nth(rng.randrange(dice.count())).click()
                keep = page.locator("#btn-keep")
                if keep.is_enabled():
                    keep.click()
                else:
                    page.locator("#btn-stop").click()
            else:
                page.locator("#btn-stop").click()
        else:
            targets = page.locator("#board g.lounger.target")
            gains = page.eval_on_selector_all(
                "#board g.lounger.target", "els => els.map(e => Number(e.dataset.gain))"
            )
            if gains:  # mostly the best-scoring lounger (a game ends sooner), sometimes any
                best = [k for k, g in enumerate(gains) if g == max(gains)]
                targets.nth(rng.choice(best) if rng.random() < 0.8 else rng.randrange(len(gains))).click()
            else:
                page.locator("#btn-pass").click()
    raise AssertionError(f"the game did not end within {limit} decisions")
