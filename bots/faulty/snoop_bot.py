#!/usr/bin/env python3
"""At its first decision, tries to read what is not its own and to write outside its private /tmp,
then plays greedily.

Reads every path in ARENA_TEST_SECRET_PATHS (os.pathsep-separated: e.g. another bot's file, the
database); writes to every path in ARENA_TEST_WRITE_PATHS (default: into its own directory, /usr
and the referee's socket directory /run/arena); tries to chmod and unlink the referee's socket
(the one every other bot dials; a successful chmod is undone at once; its own stream is already
open); looks for other bots' tokens in /proc (command lines and environments; with
ARENA_TEST_TOKEN_SOURCES set, also in each of the two on its own); and signals the pid in
ARENA_TEST_SIGNAL_PID (signal 0: "could I?").  Each result is logged on stderr (see
_common.attempt); inside the sandbox every attempt must fail.  It also writes ARENA_TEST_TMP_NAME
into its private /tmp (allowed, and invisible outside)."""

import glob
import os
import re
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from _common import attempt

from arena.engine import GreedyPolicy
from arena.sdk import Bot, run

HERE = os.path.dirname(os.path.abspath(__file__))


def _read(path):
    with open(path, "rb") as fh:
        return f"read {len(fh.read(1 << 20))} bytes"


def _write(path):
    with open(path, "a") as fh:
        fh.write("snoop was here\n")
    return f"wrote {path}"


def _chmod_socket(path):
    mode = os.stat(path).st_mode & 0o7777
    os.chmod(path, 0)
    os.chmod(path, mode)  # undo at once: the test only needs to know that it was possible
    return "chmod 0 worked (undone)"


def _unlink(path):
    os.unlink(path)
    return "unlinked"


def _parent_pid(pid):
    try:
        with open(f"/proc/{pid}/stat", "rb") as fh:
            return int(fh.read().rsplit(b")", 1)[1].split()[1])
    except (OSError, ValueError, IndexError):
        return -1


def _scope():
    """The pids to look at: every process, or with ARENA_TEST_TOKEN_SCOPE=PID only that process
    and its descendants (the test that runs the match: tests run beside it on the same machine
    must not count their tokens)."""
    pids = [int(p.rsplit("/", 1)[1]) for p in glob.glob("/proc/[0-9]*")]
    scope = os.environ.get("ARENA_TEST_TOKEN_SCOPE", "")
    if not scope.isdigit():
        return pids
    children = {}
    for pid in pids:
        children.setdefault(_parent_pid(pid), []).append(pid)
    inside, todo = [], [int(scope)]
    while todo:
        pid = todo.pop()
        inside.append(pid)
        todo.extend(children.get(pid, []))
    return inside


def _tokens(sources=("cmdline", "environ")):
    mine = os.environ.get("ARENA_TOKEN", "")
    found = set()
    pids = _scope()
    for f in [f"/proc/{pid}/{source}" for source in sources for pid in pids]:
        try:
            with open(f, "rb") as fh:
                data = fh.read().decode("utf-8", "replace")
        except OSError:
            continue
        found |= set(re.findall(r"at_[A-Za-z0-9_-]{20,}", data))
    others = found - {mine}
    if not others:
        raise LookupError(f"no foreign token among {len(found)} found in /proc/*/{'|'.join(sources)}")
    return f"{len(others)} foreign token(s)"


def _signal(pid):
    os.kill(pid, 0)
    return f"may signal pid {pid}"


def hostile_attempts():
    secrets = [p for p in os.environ.get("ARENA_TEST_SECRET_PATHS", "").split(os.pathsep) if p]
    default = [os.path.join(HERE, "snoop-was-here"), "/usr/snoop-was-here", "/run/arena/snoop-was-here"]
    writes = os.environ.get("ARENA_TEST_WRITE_PATHS", os.pathsep.join(default)).split(os.pathsep)
    writes = [p for p in writes if p]
    socket_path = os.environ.get("ARENA_ADDRESS", "").removeprefix("unix:")
    n = 0
    for p in secrets:
        n += 1
        attempt("snoop", f"read:{p}", lambda p=p: _read(p))
    for p in writes:
        n += 1
        attempt("snoop", f"write:{p}", lambda p=p: _write(p))
    if socket_path.startswith("/"):
        n += 2
        attempt("snoop", f"chmod:{socket_path}", lambda: _chmod_socket(socket_path))
        attempt("snoop", f"unlink:{socket_path}", lambda: _unlink(socket_path))
    n += 1
    attempt("snoop", "tokens:/proc", _tokens)
    if os.environ.get("ARENA_TEST_TOKEN_SOURCES"):  # each source on its own
        for source in ("cmdline", "environ"):
            n += 1
            attempt("snoop", f"tokens:/proc/*/{source}", lambda source=source: _tokens((source,)))
    pid = os.environ.get("ARENA_TEST_SIGNAL_PID")
    if pid:
        n += 1
        attempt("snoop", f"signal:{pid}", lambda: _signal(int(pid)))
    private = os.path.join(os.environ.get("TMPDIR", "/tmp"), os.environ.get("ARENA_TEST_TMP_NAME", "snoop"))
    with open(private, "w") as fh:
        fh.write("mine\n")
    print(f"snoop: private tmp file {private} written (allowed)", file=sys.stderr, flush=True)
    print(f"snoop: {n} attempts made; now playing", file=sys.stderr, flush=True)


class SnoopBot(Bot):
    name = "snoop"

    def __init__(self):
        super().__init__()
        self.policy = GreedyPolicy()

    attacked = False

    def choose(self, state, legal):
        if not self.attacked:  # at its first decision: every seat is connected by then
            self.attacked = True
            hostile_attempts()
        return self.policy.choose(state)


if __name__ == "__main__":
    run(SnoopBot())
