"""arena evaluate reports decision-time percentiles (p50, p99, max; wall and CPU) per bot."""

from __future__ import annotations

import atexit
import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

from arena.evaluate_runner import Timing, record_times
from arena.evaluation import Percentiles, percentile

ARENA = str(Path(sys.executable).parent / "arena")
HOME = tempfile.mkdtemp(prefix="arena-eval-times-")
atexit.register(shutil.rmtree, HOME, True)  # removed when the test run ends


def test_percentile_nearest_rank() -> None:
    values = [float(x) for x in range(1, 101)]  # 1..100
    assert percentile(values, 50) == 50.0
    assert percentile(values, 99) == 99.0
    assert percentile(values, 100) == 100.0
    assert percentile([3.0], 99) == 3.0
    assert percentile([5.0, 1.0, 3.0], 50) == 3.0
    with pytest.raises(ValueError, match="no values"):
        percentile([], 50)
    with pytest.raises(ValueError, match="0 < q <= 100"):
        percentile([1.0], 0)
    p = Percentiles.of([0.001, 0.002, 0.010])
    assert p.to_json() == {"count": 3, "p50": 2.0, "p99": 10.0, "max": 10.0}


def test_record_times_reads_answered_decisions_only() -> None:
    replay = "\n".join(
        json.dumps(x)
        for x in (
            {"game": "cool-am-pool", "players": 2},
            {"seat": 0, "legal": ["a", "b"], "action": "a", "ms": 2.5, "cpu_ms": 1.25},
            {"throw": "throw green"},
            {"seat": 1, "legal": ["stop"], "action": "stop", "forced": True},
            {"seat": 1, "legal": ["a", "b"], "action": "b", "ms": 4.0},
            {"scores": [1, 2], "think_s": [0.1, 0.2]},
        )
    )
    assert record_times(replay) == [(0, 0.0025, 0.00125), (1, 0.004, None)]
    t = Timing()
    for _, wall, cpu in record_times(replay):
        t.add_decision(wall, cpu)
    pct = t.percentiles()
    assert pct["wall"] is not None and pct["wall"].count == 2 and pct["wall"].max == 0.004
    assert pct["cpu"] is not None and pct["cpu"].count == 1
    assert t.to_json()["wall_ms"] == {"count": 2, "p50": 2.5, "p99": 4.0, "max": 4.0}


@pytest.mark.parametrize("cpu_mode", [False, True])
def test_evaluate_reports_percentiles_and_timeouts(cpu_mode: bool) -> None:
    args = ["greedy", "--vs", "greedy-naive", "--games", "2", "--seed", "3", "--jobs", "1", "--no-sequential"]
    env = {**os.environ, "ARENA_HOME": HOME}
    proc = subprocess.run(
        [ARENA, "evaluate", *args, *(["--cpu-time"] if cpu_mode else []), "--json"],
        capture_output=True, text=True, timeout=240, env=env,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    data = json.loads(proc.stdout)
    for side in ("candidate", "baseline"):
        t = data["think_time"][side]
        assert t["timeouts"] == 0
        wall = t["wall_ms"]
        assert wall["count"] > 20 and 0 < wall["p50"] <= wall["p99"] <= wall["max"]
        cpu = t["cpu_ms"]
        assert cpu is not None and cpu["count"] > 20 and 0 <= cpu["p50"] <= cpu["p99"] <= cpu["max"]
    table = subprocess.run(
        [ARENA, "evaluate", *args, "--quiet"], capture_output=True, text=True, timeout=240, env=env,
        check=True,
    ).stdout  # fmt: skip
    assert "p99" in table and "CPU per" in table and "timeouts" in table
