"""Take the README's screenshot of the play page (docs/img/play.png) with Playwright and Chromium.

Runs ``arena play greedy random invader`` (4 players) in a temporary data folder, plays by clicks
until the person's seat has an action step with loungers to choose from, and saves the page::

    .venv/bin/python scripts/play_screenshot.py [--out docs/img/play.png]
"""

from __future__ import annotations

import argparse
import random
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests"))

from browser.playkit import CHROMIUM, CHROMIUM_ARGS, DECIDE_OR_OVER, start_play  # noqa: E402


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=ROOT / "docs" / "img" / "play.png")
    parser.add_argument("--width", type=int, default=1440)
    parser.add_argument("--height", type=int, default=1120)
    parser.add_argument("--seed", default="77", help="the match seed")
    args = parser.parse_args()
    from playwright.sync_api import sync_playwright

    home = Path(tempfile.mkdtemp(prefix="arena-shot-"))
    played = start_play(home, "greedy", "random", "invader", "--seed", args.seed, name="you")
    rng = random.Random(7)
    try:
        with sync_playwright() as pw:
            browser = pw.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS)
            page = browser.new_context(viewport={"width": args.width, "height": args.height}).new_page()
            page.goto(played.url)
            seen = ""
            while True:
                page.wait_for_function(DECIDE_OR_OVER, arg=seen, timeout=60_000)
                panel = page.locator("#play-panel")
                if panel.get_attribute("data-state") == "over":
                    raise SystemExit(
                        "the game ended before a good moment for the screenshot: try another --seed"
                    )
                seen = panel.get_attribute("data-request") or ""
                phase = panel.get_attribute("data-phase")
                targets = page.locator("#board g.lounger.target")
                rounds = int(page.locator("#board").get_attribute("data-round") or 0)
                if phase == "action" and targets.count() >= 2 and rounds >= 4:
                    break
                if phase == "roll":
                    page.locator("#btn-stop").click()
                elif targets.count():
                    targets.nth(rng.randrange(targets.count())).click()
                else:
                    page.locator("#btn-pass").click()
            page.locator("#play-options button.opt").nth(1).hover()
            args.out.parent.mkdir(parents=True, exist_ok=True)
            page.screenshot(path=str(args.out), full_page=False)
            browser.close()
    finally:
        played.stop()
    print(f"wrote {args.out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
