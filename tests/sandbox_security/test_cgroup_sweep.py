"""The sweep of bot cgroups left by dead arena processes (arena/sandbox/cgroups.py) judges only
the cgroups made in its own pid namespace: an arena in a container that shares the cgroup tree
but not the pids (`unshare --pid`) saw another arena's live maker pid as dead and removed the
cgroup a bot was about to join ("arena guard: cannot join the cgroup ...", a `crashed` forfeit;
found when two test processes ran such arenas at once).  Real directories, real pids."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from arena.pidspace import pid_namespace as _pid_namespace
from arena.sandbox.cgroups import PREFIX, BotCgroup, _maker, _sweep


def _dead_pid() -> int:
    proc = subprocess.Popen([sys.executable, "-c", "pass"])
    proc.wait()
    return proc.pid


def test_cgroup_names_carry_the_makers_pid_and_namespace() -> None:
    here = _pid_namespace()
    assert here.isdigit()
    assert _maker(f"{PREFIX}123-n{here}-abcdef012345") == (123, here)
    assert _maker(f"{PREFIX}123-abcdef012345") == (123, "")  # an older version's name
    assert _maker(f"{PREFIX}x-abcdef") is None and _maker("other-123-abc") is None


def test_the_sweep_judges_only_its_own_namespaces_dead_makers(tmp_path: Path) -> None:
    here, dead = _pid_namespace(), _dead_pid()
    names = {
        "dead-here": f"{PREFIX}{dead}-n{here}-aaaaaaaaaaaa",
        "alive-here": f"{PREFIX}{os.getpid()}-n{here}-bbbbbbbbbbbb",
        "dead-legacy": f"{PREFIX}{dead}-cccccccccccc",
        "elsewhere": f"{PREFIX}{dead}-n1-dddddddddddd",  # pid means nothing here: not ours to judge
    }
    for name in names.values():
        (tmp_path / name).mkdir()
    _sweep(tmp_path)
    left = {k for k, name in names.items() if (tmp_path / name).is_dir()}
    assert left == {"alive-here", "elsewhere"}


def test_a_new_bot_cgroup_is_named_with_this_namespace() -> None:
    group = BotCgroup.create(None, None)
    assert group is not None, "no cgroups here: the sandbox's limits and its reaping need them"
    try:
        for d in group.dirs.values():
            assert _maker(d.name) == (os.getpid(), _pid_namespace()), d.name
    finally:
        group.remove()
