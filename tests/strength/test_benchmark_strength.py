"""benchmarks/strength.py --quick: the one-run strength report works end to end (real bots)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_quick_run_prints_every_figure(tmp_path: Path) -> None:
    # a short home (bots' Unix socket paths live under it; pytest's tmp_path can be too long),
    # removed afterwards: the run must leave nothing in the system's temporary folder
    home = tempfile.mkdtemp(prefix="arena-strength-bench-")
    env = {**os.environ, "ARENA_HOME": home}
    out = tmp_path / "strength.json"
    try:
        proc = subprocess.run(
            [sys.executable, str(ROOT / "benchmarks" / "strength.py"), "--quick", "--quiet",
             "--only", "greedy-2p", "search-4p", "--parallel", "--json", str(out)],
            capture_output=True, text=True, timeout=600, env=env,
        )  # fmt: skip
    finally:
        shutil.rmtree(home, ignore_errors=True)
    assert proc.returncode == 0, proc.stderr
    text = proc.stdout
    needles = (
        "== greedy-2p: greedy vs greedy-naive, 2 players",
        "== search-4p: search vs greedy, 4 players",
        "Elo difference", "p50", "p99", "max", "CPU", "timeouts 0", "summary", "target >= +200",
    )  # fmt: skip
    for needle in needles:
        assert needle in text, needle
    data = json.loads(out.read_text())
    assert [d["matchup"] for d in data] == ["greedy-2p", "search-4p"]
    assert data[1]["think_time"]["candidate"]["wall_ms"]["count"] > 0
