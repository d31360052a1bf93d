"""The host's socket folder: a host killed with SIGKILL leaves its folder behind, and the next host
that starts removes it -- never a folder of a live process, never another kind of folder."""

from __future__ import annotations

import asyncio
import os
import shutil
import signal
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

from arena.hosting import MatchHost
from arena.hosting.sockdir import PREFIX, make_sock_dir, sweep_stale
from arena.pidspace import pid_namespace


def dead_pid() -> int:
    """The pid of a process that has exited and been reaped."""
    proc = subprocess.Popen([sys.executable, "-c", "pass"])
    proc.wait()
    return proc.pid


def test_only_folders_of_dead_processes_are_swept(tmp_path: Path) -> None:
    dead = tmp_path / f"{PREFIX}{dead_pid()}-abc"
    live = tmp_path / f"{PREFIX}{os.getppid()}-abc"
    mine = make_sock_dir(str(tmp_path))
    other = tmp_path / "arena-check-123-abc"  # another kind of folder
    odd = tmp_path / f"{PREFIX}notapid-abc"
    for folder in (dead, live, other, odd):
        folder.mkdir()
    (dead / "referee.sock").write_text("")
    stray_file = tmp_path / f"{PREFIX}{dead_pid()}-file"  # a file, not a folder
    stray_file.write_text("")
    assert mine.name.startswith(f"{PREFIX}{os.getpid()}-")
    assert oct(mine.stat().st_mode & 0o777) == "0o700"

    assert sweep_stale(str(tmp_path)) == [dead]
    assert not dead.exists()
    assert live.exists() and mine.exists() and other.exists() and odd.exists() and stray_file.exists()
    assert sweep_stale(str(tmp_path)) == []
    assert sweep_stale(str(tmp_path / "missing")) == []  # no such folder: nothing, no error


def test_a_new_host_removes_the_folder_of_a_host_killed_with_sigkill() -> None:
    """A real process makes its socket folder the way a host does and is killed with SIGKILL; a
    host started afterwards removes that folder, and its own folder goes when it closes."""
    code = (
        "from arena.hosting.sockdir import make_sock_dir; import time; "
        "print(make_sock_dir(), flush=True); time.sleep(60)"
    )
    proc = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, text=True)
    assert proc.stdout is not None
    left = Path(proc.stdout.readline().strip())
    assert left.is_dir() and left.parent == Path(tempfile.gettempdir())
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    assert left.is_dir()  # nobody cleaned up

    async def scenario() -> Path:
        host = MatchHost(sandbox=None)
        await host.start()
        assert host.sock_dir is not None and host.sock_dir.is_dir()
        assert not left.exists()
        own = host.sock_dir
        await host.close()
        return own

    own = asyncio.run(scenario())
    assert not own.exists()


def test_folders_of_another_pid_namespace_are_left_alone(tmp_path: Path) -> None:
    """A folder whose maker's pid is dead *here* but that was made in another pid namespace (a
    container sharing /tmp) cannot be judged from here; a folder of this namespace or of an older
    version (no namespace in its name) with a dead pid is swept."""
    here, dead = pid_namespace(), dead_pid()
    other_space = tmp_path / f"{PREFIX}{dead}-n1-abc"
    this_space = tmp_path / f"{PREFIX}{dead}-n{here}-abc"
    older = tmp_path / f"{PREFIX}{dead}-nabc"  # an old name whose random part starts with "n"
    for folder in (other_space, this_space, older):
        folder.mkdir()
    assert sorted(sweep_stale(str(tmp_path))) == sorted([this_space, older])
    assert other_space.exists()
    assert make_sock_dir(str(tmp_path)).name.startswith(f"{PREFIX}{os.getpid()}-n{here}-")


def test_a_host_in_another_pid_namespace_spares_a_live_hosts_folder() -> None:
    """Seen in a CI run: a test ran ``arena match`` under ``unshare --pid`` while a server's
    validation match was played; that host's sweep saw the live worker's pid as dead (no such pid
    in its namespace), removed its socket folder, and both bots of the worker's next match
    "crashed before connecting" (bwrap: can't find source path).  Real namespaces, real /tmp."""
    if shutil.which("unshare") is None:
        pytest.skip("needs util-linux's unshare")
    mine = make_sock_dir()  # this process's, in the shared /tmp: alive here
    try:
        code = "from arena.hosting.sockdir import sweep_stale; print(sweep_stale())"
        swept = subprocess.run(
            ["unshare", "--pid", "--fork", "--mount-proc", sys.executable, "-c", code],
            capture_output=True, text=True, timeout=60,
        )  # fmt: skip
        assert swept.returncode == 0, swept.stderr
        assert mine.is_dir(), swept.stdout
        assert str(mine) not in swept.stdout
    finally:
        shutil.rmtree(mine, ignore_errors=True)
