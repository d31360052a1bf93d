"""Project-wide pytest options, Hypothesis profiles and the skip policy.

Hypothesis profiles (pick one with ``HYPOTHESIS_PROFILE=name``):

* ``ci``: derandomised (the same examples on every run, so a CI failure reproduces), no
  per-example deadline, no example database.  The default when ``CI`` is set, and in ``./dev test``.
* ``dev``: Hypothesis' own defaults: new random examples every run, failures remembered in
  ``.hypothesis/``.  The default otherwise.
* ``fuzz``: many more examples, no deadline, for local fuzzing (tests that set their own example
  count keep it; the referee fuzz tests scale with ``ARENA_FUZZ_EXAMPLES``).

Skip policy: a skipped test is not a passed one.  Every run ends with the skip summary (``-ra``);
with ``CI`` set (``CI=true``, as CI services do) any skip fails the run.
"""

from __future__ import annotations

import os
import shutil
import signal
import socket
import tempfile
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, settings
from hypothesis.errors import InvalidArgument

PROFILE_ENV = "HYPOTHESIS_PROFILE"
PROFILES = ("ci", "dev", "fuzz")
FUZZ_EXAMPLES = 2000

settings.register_profile("ci", derandomize=True, deadline=None, database=None, print_blob=True)
settings.register_profile("dev")
settings.register_profile(
    "fuzz",
    max_examples=FUZZ_EXAMPLES,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)


def in_ci() -> bool:
    """Whether this run is CI: ``$CI`` set to anything but empty, ``0``, ``false`` or ``no``."""
    return os.environ.get("CI", "").strip().lower() not in ("", "0", "false", "no")


def hypothesis_profile() -> str:
    """``$HYPOTHESIS_PROFILE``, else ``ci`` in CI and ``dev`` elsewhere."""
    return os.environ.get(PROFILE_ENV, "").strip() or ("ci" if in_ci() else "dev")


try:
    settings.load_profile(hypothesis_profile())
except InvalidArgument:
    raise pytest.UsageError(
        f"{PROFILE_ENV}={hypothesis_profile()!r} is not a Hypothesis profile of this project; "
        f"use one of {', '.join(PROFILES)}"
    ) from None


# The terminal-size variables as the user started the run: pytest-xdist's workers get COLUMNS=80
# and LINES=24 of their own, and the CLI tests' output must not depend on how many processes ran it.
_USER_TERMINAL = {k: os.environ.get(k) for k in ("COLUMNS", "LINES")}


@pytest.hookimpl(optionalhook=True)
def pytest_configure_node(node: Any) -> None:
    """pytest-xdist, in the controller: hand each worker the user's terminal-size variables and
    the controller's session data directory (the worker makes its own instead)."""
    node.workerinput["arena_terminal"] = dict(_USER_TERMINAL)
    node.workerinput["arena_session_home"] = _SESSION_HOME[0]


def _hang_up_ignored(signum: int, frame: object) -> None:
    """This process's SIGHUP under ``nohup`` (see :func:`pytest_configure`): nothing."""


def pytest_configure(config: pytest.Config) -> None:
    """No test writes into the checkout: a test that does not choose its own ARENA_HOME (most
    fixtures set one per test) gets a private data directory for the session instead of
    ``./arena-data`` in whatever folder pytest was started from.

    Ctrl-C works in the tests' processes however the suite was started: a shell without job
    control starts a background command (``./dev test &``, ``nohup``) with SIGINT ignored, every
    child would inherit that, and the tests that send SIGINT to a command would see it ignored.
    A Python handler is not inherited across exec (the child gets the default), so installing
    Python's own handler here gives every child the normal Ctrl-C.  Likewise for SIGHUP under
    ``nohup``: the commands keep an inherited ignored SIGHUP (as they should), so the tests of a
    closed terminal would see nothing happen; a no-op Python handler keeps this process immune,
    as ``nohup`` asked, and gives every child the default.

    Under pytest-xdist every worker restores the user's COLUMNS and LINES and makes its own data
    directory (:func:`pytest_configure_node`)."""
    if signal.getsignal(signal.SIGINT) is signal.SIG_IGN:
        signal.signal(signal.SIGINT, signal.default_int_handler)
    if signal.getsignal(signal.SIGHUP) is signal.SIG_IGN:
        signal.signal(signal.SIGHUP, _hang_up_ignored)
    worker = getattr(config, "workerinput", None)  # a pytest-xdist worker
    if worker is not None:
        for key, value in worker.get("arena_terminal", {}).items():
            if value is None:
                os.environ.pop(key, None)
            else:
                os.environ[key] = value
        if worker.get("arena_session_home") and os.environ.get("ARENA_HOME") == worker["arena_session_home"]:
            del os.environ["ARENA_HOME"]  # the controller's: every worker gets its own below
    if not os.environ.get("ARENA_HOME"):
        os.environ["ARENA_HOME"] = _SESSION_HOME[0] = tempfile.mkdtemp(prefix="arena-tests-home-")


_SESSION_HOME = [""]  # the data directory pytest_configure made, removed when the run ends
_LIVE_GLOB = f"arena-live-{os.getuid()}-*.sock"
_LIVE_BEFORE = set(Path(tempfile.gettempdir()).glob(_LIVE_GLOB))  # live channels of before the run


def _remove_stale_live_sockets() -> None:
    """The live-channel sockets (arena/live/channel.py) that tests' web processes killed with
    SIGKILL could not remove: the ones made during this run that nobody listens on any more."""
    for path in set(Path(tempfile.gettempdir()).glob(_LIVE_GLOB)) - _LIVE_BEFORE:
        probe = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
        try:
            probe.connect(str(path))
        except ConnectionRefusedError:
            path.unlink(missing_ok=True)
        except OSError:
            pass
        finally:
            probe.close()


_SHM = Path("/dev/shm")
_SEMAPHORES_BEFORE = set(_SHM.glob("sem.mp-*")) if _SHM.is_dir() else set()


def _remove_leaked_semaphores() -> None:
    """The named semaphores of worker pools (``/dev/shm/sem.mp-*``) that tests killing a whole
    process group with SIGKILL leave behind (the resource tracker that would remove them dies
    too; about a hundred an hour of testing had piled up): the ones that appeared during this
    run and that no process maps any more."""
    if not _SHM.is_dir():
        return
    leaked = set(_SHM.glob("sem.mp-*")) - _SEMAPHORES_BEFORE
    if not leaked:
        return
    # a process maps a semaphore under the temporary name it was made with (shown as deleted):
    # the inode tells which named file it is
    mapped: set[int] = set()
    for maps in Path("/proc").glob("[0-9]*/maps"):
        try:
            lines = maps.read_text().splitlines()
        except OSError:  # gone, or not ours to read
            continue
        mapped.update(int(line.split()[4]) for line in lines if "/dev/shm/sem." in line)
    for path in leaked:
        try:
            if path.stat().st_ino not in mapped:
                path.unlink()
        except OSError:
            continue


def pytest_unconfigure(config: pytest.Config) -> None:
    if getattr(config, "workerinput", None) is None:  # the run's own process, after every worker
        _remove_stale_live_sockets()
        _remove_leaked_semaphores()
    if _SESSION_HOME[0]:
        shutil.rmtree(_SESSION_HOME[0], ignore_errors=True)
        if os.environ.get("ARENA_HOME") == _SESSION_HOME[0]:
            del os.environ["ARENA_HOME"]
        _SESSION_HOME[0] = ""


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption(
        "--regen-golden",
        action="store_true",
        default=False,
        help="rewrite the golden files under tests/*/golden instead of comparing against them",
    )


def pytest_report_header(config: pytest.Config) -> str:
    ci = "CI: a skipped test fails the run" if in_ci() else "not CI: skips are reported, not failed"
    return f"hypothesis profile: {hypothesis_profile()} ({PROFILE_ENV}); {ci}"


def _skipped(session: pytest.Session) -> int:
    reporter = session.config.pluginmanager.get_plugin("terminalreporter")
    if reporter is None:
        return 0
    return len(reporter.stats.get("skipped", []))


def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    """In CI a run with skipped tests fails (exit status 1), even when everything else passed."""
    if in_ci() and _skipped(session) and exitstatus == pytest.ExitCode.OK:
        session.exitstatus = pytest.ExitCode.TESTS_FAILED


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter, exitstatus: int) -> None:
    skipped = len(terminalreporter.stats.get("skipped", []))
    if not skipped:
        return
    what = f"{skipped} test{'s' if skipped != 1 else ''} skipped (reasons above)"
    if in_ci():
        terminalreporter.write_line(f"{what}: CI=true, so the run fails; a skip is not a pass", red=True)
    else:
        terminalreporter.write_line(
            f"{what}: they proved nothing on this machine; with CI=true the run would fail", yellow=True
        )
