"""The bubblewrap sandbox: what a bot sees and may do.

A sandboxed bot runs in new namespaces (``--unshare-all``: no network but its own loopback, its
own PID namespace that dies with it, no IPC, its own hostname), with every capability dropped, as
uid/gid 65534 inside, on a read-only view of the system (``/usr``, the libraries, the Python
installation and the ``arena`` package), its own directory read-only (without the arena's data
directory, database or logs where they lie in it), a private writable
``/tmp`` (its HOME) and nothing else: not the database, not the other bots, not the host's home
directories.  It reaches the referee through the referee's Unix socket directory, bind-mounted read-only
at ``/run/arena``.  Its environment is a few known variables and the bot's own (address, token,
name), handed to bubblewrap as its environment, never as ``--setenv`` arguments: a command line is
readable by every process on the host (``/proc/PID/cmdline``), an environment only by the same
uid.  Resource limits come from ``prlimit`` (rlimits) and, where possible, a cgroup (see
:mod:`arena.sandbox.cgroups`).
"""

from __future__ import annotations

import functools
import os
import shutil
import subprocess
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path

from .limits import MIB, SandboxLimits

SOCKET_DIR = "/run/arena"
SYSTEM_DIRS = ("/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32")
ETC_FILES = (
    "/etc/ld.so.cache",
    "/etc/ld.so.conf",
    "/etc/ld.so.conf.d",
    "/etc/alternatives",
    "/etc/localtime",
)
ARENA_PACKAGE = Path(__file__).resolve().parent.parent  # .../arena
SANDBOX_UID = 65534


class SandboxUnavailableError(RuntimeError):
    """bubblewrap cannot run here; untrusted bots are refused unless the user opts out."""


@functools.cache
def bwrap_problem() -> str | None:
    """None when bubblewrap works here, else why not (checked once per process)."""
    exe = shutil.which("bwrap")
    if exe is None:
        return "bubblewrap is not installed (Debian: apt-get install bubblewrap)"
    try:
        proc = subprocess.run(
            [exe, "--unshare-all", "--die-with-parent", *_system_binds(), "--", "/bin/true"],
            capture_output=True,
            timeout=20,
        )
    except (OSError, subprocess.TimeoutExpired) as exc:
        return f"bubblewrap failed to start: {exc}"
    if proc.returncode != 0:
        return f"bubblewrap cannot create namespaces here: {proc.stderr.decode(errors='replace').strip()}"
    return None


@functools.cache
def bwrap_sizes_tmpfs() -> bool:
    """Whether this bubblewrap takes ``--size`` for a tmpfs (0.7 and later; checked once)."""
    exe = shutil.which("bwrap")
    if exe is None:
        return False
    try:
        proc = subprocess.run([exe, "--help"], capture_output=True, timeout=20)
    except (OSError, subprocess.TimeoutExpired):
        return False
    return b"--size" in proc.stdout + proc.stderr


def require_bwrap() -> None:
    """Raise :class:`SandboxUnavailableError` with what to do when bubblewrap cannot run."""
    problem = bwrap_problem()
    if problem is not None:
        raise SandboxUnavailableError(
            f"cannot sandbox bots: {problem}. Install bubblewrap, or run only bots you trust with "
            f"--no-sandbox (ARENA_SANDBOX=off)."
        )


def _system_binds() -> list[str]:
    args: list[str] = []
    for d in SYSTEM_DIRS:
        if os.path.lexists(d):
            args += ["--ro-bind", d, d] if not os.path.islink(d) else ["--symlink", os.readlink(d), d]
    return args


def _python_binds() -> list[str]:
    args: list[str] = []
    seen: set[str] = set()
    for p in (sys.base_prefix, sys.prefix, str(ARENA_PACKAGE)):
        real = os.path.realpath(p)
        for path in {p, real}:
            if path not in seen and os.path.exists(path) and not path.startswith(("/usr/", "/bin", "/lib")):
                seen.add(path)
                args += ["--ro-bind", path, path]
    return args


def _own_directory(bot_dir: Path, command: Sequence[str], hide: Sequence[Path]) -> list[str]:
    """The binds of the bot's own directory, read-only, without the arena's own files in it.

    A bot played by its path (``arena match mybot.py``) runs from the folder it is in, and the
    default data directory is ``./arena-data`` in the current folder: a bot next to it read the
    database (the seed of the very match it was playing, hence every throw to come), the other
    bots' files and its opponent's live logs.  Each path of ``hide`` (the data directory, the
    database's files, the bots' log folder) below the bot's directory is covered (a folder by an
    empty read-only tmpfs, a file by ``/dev/null``); when the bot's directory is one of them, only
    the bot's own files (the absolute paths of ``command`` in it) are bound, not the folder."""
    here = Path(os.path.realpath(bot_dir))
    covers: list[str] = []
    dirs: list[Path] = []  # covered already, with all that is in them
    # folders first (a file in a covered folder is out of sight already, and could not be covered)
    for real in sorted({Path(os.path.realpath(p)) for p in hide}, key=lambda r: (not r.is_dir(), r)):
        if real == here:
            return [
                arg
                for part in command
                if os.path.isabs(part)
                and os.path.isfile(part)
                and Path(os.path.realpath(part)).parent == here
                for arg in ("--ro-bind", part, part)
            ]
        if (
            real.is_relative_to(here)
            and os.path.lexists(real)
            and not any(real.is_relative_to(d) for d in dirs)
        ):
            shown = str(bot_dir / real.relative_to(here))  # where the bot sees it
            if real.is_dir():
                covers += ["--tmpfs", shown, "--remount-ro", shown]
                dirs.append(real)
            else:
                covers += ["--ro-bind", "/dev/null", shown]
    return ["--ro-bind", str(bot_dir), str(bot_dir), *covers]


def wrap(
    command: Sequence[str],
    *,
    bot_dir: Path,
    socket_dir: Path,
    limits: SandboxLimits,
    env: Mapping[str, str],
    hide: Sequence[Path] = (),
) -> tuple[list[str], dict[str, str]]:
    """The argv that runs ``command`` inside the sandbox (bwrap, then prlimit, then the bot), and
    the complete environment to start it with: the bot gets exactly that environment (bwrap
    passes its own on), so secrets such as the token never appear on a command line.  ``hide``:
    the arena's own files, kept out of sight where they lie in the bot's directory
    (:func:`_own_directory`)."""
    exe = shutil.which("bwrap") or "bwrap"
    args = [
        exe,
        "--unshare-all",
        "--die-with-parent",
        "--new-session",
        "--cap-drop",
        "ALL",
        "--unshare-user",
        "--uid",
        str(SANDBOX_UID),
        "--gid",
        str(SANDBOX_UID),
        "--hostname",
        "sandbox",
        *_system_binds(),
    ]
    for f in ETC_FILES:
        if os.path.exists(f):
            args += ["--ro-bind", f, f]
    # The writable file systems are memory (tmpfs), each by default up to half the machine's
    # RAM, and where no cgroup can be made (below) nothing else bounds them: a bot writing many
    # files of the 64 MiB file-size rlimit filled the host's memory.  So /tmp and /dev/shm are
    # each at most the bot's memory limit, and the root (with /run) and /dev are read-only at the
    # end (a device node stays writable on a read-only mount).  A bubblewrap older than 0.7 has
    # no --size: its /tmp and /dev stay unbounded and writable, as the README says.
    sized = bwrap_sizes_tmpfs()
    size = ["--size", str(limits.memory_mb * MIB)] if sized else []
    # The private /tmp comes before the Python and bot binds: bwrap mounts in order, and a
    # checkout (or venv) that lives under /tmp must stay visible on top of the empty tmpfs.
    args += [*size, "--tmpfs", "/tmp"]
    args += _python_binds()
    args += [
        "--proc",
        "/proc",
        "--dev",
        "/dev",
        *([*size, "--tmpfs", "/dev/shm"] if sized else []),
        "--dir",
        "/run",
        # Read-only: connecting to a Unix socket needs no write access to the mount, and the
        # bot (uid 65534 inside, but the arena's uid outside) must not be able to replace,
        # chmod or unlink the referee's socket that other bots dial (or litter the directory).
        "--ro-bind",
        str(socket_dir),
        SOCKET_DIR,
        *_own_directory(bot_dir, command, hide),
        *(["--remount-ro", "/dev"] if sized else []),
        "--remount-ro",
        "/",
        "--chdir",
        str(bot_dir),
    ]
    base_env = {
        "PATH": f"{Path(sys.executable).parent}:/usr/local/bin:/usr/bin:/bin",
        "HOME": "/tmp",
        "TMPDIR": "/tmp",
        "LANG": "C.UTF-8",
        "PYTHONDONTWRITEBYTECODE": "1",
    }
    prlimit = [
        shutil.which("prlimit") or "/usr/bin/prlimit",
        f"--cpu={limits.cpu_seconds}",
        f"--as={limits.address_space_mb * MIB}",
        f"--nofile={limits.open_files}",
        f"--fsize={limits.file_size_mb * MIB}",
        "--core=0",
        "--",
    ]
    return [*args, "--", *prlimit, *command], {**base_env, **env}
