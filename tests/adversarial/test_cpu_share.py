"""A bot cannot starve its opponent of CPU: each bot is a scheduling group (cgroup) of its own,
so the machine is shared between bots, not between their processes.

``crowd_bot.py`` forks 40 spinning children, each in its own session, that spin while it is not
its turn (so none of it is on its own clock, even on the CPU clock).  Its opponent spends 0.2 s
of CPU on each of its first 12 decisions, on a clock of 0.3 s of CPU per decision + 0.5 s bank.
Before the bots had CPU groups it lost every such match on time (the wall-clock backstop of the
CPU clock: "no answer after 2.601s"), having used 0.2 s of CPU."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from .helpers import FAULTY, cgroups_available


def _cpu_groups() -> str | None:
    """Why bots cannot have CPU groups here (None: they can)."""
    from arena.sandbox.cgroups import BotCgroup

    group = BotCgroup.create(None, None)
    if group is None:
        return "no per-bot cgroups here"
    try:
        if group.v2:
            controllers = (next(iter(group.dirs.values())).parent / "cgroup.subtree_control").read_text()
            return None if "cpu" in controllers.split() else "the cgroup v2 cpu controller is not delegated"
        return None if "cpu" in group.dirs else "no cgroup v1 cpu controller"
    finally:
        group.remove()


pytestmark = [
    pytest.mark.skipif(cgroups_available() is not None, reason=str(cgroups_available())),
    pytest.mark.skipif(_cpu_groups() is not None, reason=str(_cpu_groups())),
]

ARENA = Path(sys.executable).parent / "arena"


def test_a_crowd_of_spinners_does_not_make_its_opponent_time_out(tmp_path: Path) -> None:
    env = {**os.environ, "ARENA_HOME": str(tmp_path / "home")}
    env.pop("ARENA_DATABASE_URL", None)
    for k in range(2):
        run = subprocess.run(
            [str(ARENA), "match", str(FAULTY / "thinker_bot.py"), str(FAULTY / "crowd_bot.py"), "--cpu-time",
             "--move-time", "0.3", "--bank", "0.5", "--seed", str(40 + k)],
            env=env, capture_output=True, text=True, timeout=300,
        )  # fmt: skip
        out = " ".join((run.stdout + run.stderr).split())
        assert run.returncode in (0, 3), out  # 3: a bot forfeited (the crowd may: its spinners'
        # CPU during its own decisions is its own, and on a loaded machine they stop late)
        assert "(thinker_bot) forfeited" not in out and "thinker_bot forfeited" not in out, out
