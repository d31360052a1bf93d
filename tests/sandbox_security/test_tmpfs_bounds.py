"""The sandbox's writable file systems are bounded without a cgroup: /tmp and /dev/shm hold at
most the bot's memory limit each, the root, /run and /dev are read-only.

They are memory (tmpfs), by default each up to half the machine's RAM.  Where the arena can
make no cgroup (an unprivileged container, a systemd host without delegation) nothing else
bounded them: the file-size rlimit caps one file at 64 MiB, not their number, so a bot could
fill the host's memory with files in /tmp, /dev/shm, / or /run (the reviewer's finding).  Real
bubblewrap, run exactly as the launcher runs it but without the cgroup the launcher adds where it
can, so the bounds checked are the sandbox's own.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from arena.sandbox import SandboxLimits, bwrap_problem
from arena.sandbox.bwrap import bwrap_sizes_tmpfs, wrap

pytestmark = pytest.mark.skipif(bwrap_problem() is not None, reason=f"no bubblewrap: {bwrap_problem()}")

FILLER = r"""
import errno, json, os
found = {}
for folder in ("/tmp", "/dev/shm", "/", "/run", "/dev", "/tmp/sub"):
    written, why = 0, "room left"
    try:
        os.makedirs(folder, exist_ok=True)
        for k in range(100):  # 1 MiB files, as many as fit (well past the 32 MiB limit)
            with open(os.path.join(folder, f"fill{k}"), "wb") as out:
                out.write(b"\0" * (1 << 20))
            written += 1
    except OSError as exc:
        why = errno.errorcode.get(exc.errno, str(exc.errno))
    found[folder] = [written, why]
    for k in range(written):
        os.unlink(os.path.join(folder, f"fill{k}"))
with open("/dev/null", "w") as null:
    null.write("still a device")
found["urandom"] = len(open("/dev/urandom", "rb").read(16))
print(json.dumps(found))
"""


@pytest.mark.skipif(not bwrap_sizes_tmpfs(), reason="this bubblewrap has no --size (before 0.7)")
def test_a_bot_cannot_fill_memory_through_the_sandboxs_file_systems(tmp_path: Path) -> None:
    bot = tmp_path / "filler.py"
    bot.write_text(FILLER, encoding="utf-8")
    argv, env = wrap(
        [sys.executable, str(bot)],
        bot_dir=tmp_path,
        socket_dir=tmp_path,
        limits=SandboxLimits(memory_mb=32),
        env={},
    )
    proc = subprocess.run(argv, env=env, capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr[-2000:]
    found = json.loads(proc.stdout)
    for folder in ("/tmp", "/dev/shm", "/tmp/sub"):  # writable, up to the limit (shared by /tmp's)
        written, why = found[folder]
        assert 0 < written <= 32 and why == "ENOSPC", found
    for folder in ("/", "/run", "/dev"):
        assert found[folder] == [0, "EROFS"], found
    assert found["urandom"] == 16
