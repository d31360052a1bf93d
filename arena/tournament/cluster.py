"""Running a tournament's matches on a Dask cluster.

Each match is one Dask task.  It runs on a worker process that keeps a referee and a pool of
kept-running bots for its whole life (one :class:`~arena.tournament.worker.WorkerThread` per
worker process, created by the first match it plays), sandboxed as on a single machine, and it
returns the :class:`~arena.referee.MatchResult` (scores, placings and the replay) to the
coordinator: this process, the database's only writer (the same loop as a local run,
:func:`arena.tournament.runner.coordinate`).  The database stays the source of truth: a lost
worker or a lost scheduler only sends unfinished matches back to the queue (Dask reschedules a
lost worker's task by itself, up to ``distributed.scheduler.allowed-failures`` times; after that,
and after a lost scheduler, the coordinator submits it again), and a second result for a finished
match is ignored.

Bot artifacts travel content-addressed: the coordinator asks every worker which of the
tournament's artifacts (by sha256) its cache ``ARENA_HOME/artifacts/<sha256>/<filename>`` lacks
and sends just those, once per worker, verified by sha256 when written; a worker that joins later
reports the missing ones with its first match and gets them then.

Workers: ``arena worker --scheduler tcp://HOST:8786`` or, equivalently,
``dask worker tcp://HOST:8786 --nthreads 1 --preload arena.tournament.cluster`` (one match at
a time per worker process: use ``--nworkers`` for more).
"""

from __future__ import annotations

import atexit
import hashlib
import ipaddress
import logging
import os
import queue
import re
import signal
import socket
import stat
import sys
import threading
import time
import uuid
from collections import Counter
from collections.abc import Callable, Hashable, Iterable, Iterator, Sequence
from concurrent.futures import CancelledError
from contextlib import contextmanager
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from distributed import Client, Future, KilledWorker, LocalCluster, Worker, WorkerPlugin, get_worker
from distributed.comm.addressing import get_address_host_port
from sqlmodel import col, select

from arena import lifecycle
from arena.live.channel import socket_path
from arena.live.remote import EndpointWatch, LiveTarget, endpoint_path
from arena.referee import MatchResult, RefereeConfig
from arena.safetext import small_int
from arena.sandbox import SandboxUnavailableError, bwrap_problem
from arena.store.bots import artifact_path as stored_artifact
from arena.store.db import Database, arena_home
from arena.store.lease import LeaseHolder, coordinator_lease
from arena.store.models import BotVersion
from arena.store.tournaments import MatchTask, field_versions, get_tournament, tournament_sandbox

from . import affinity
from .runfile import reap_dead_run, run_path
from .runner import Outcome, ProgressFn, Requeue, TournamentError, coordinate, interrupts_held, open_run
from .worker import WorkerThread

log = logging.getLogger(__name__)

PLUGIN_NAME = "arena-worker"
SHA_RE = re.compile(r"[0-9a-f]{64}\Z")


# --------------------------------------------------------------------------- what travels


@dataclass(frozen=True)
class Artifact:
    """A bot's file as the coordinator knows it: content hash, file name, and its path on the
    coordinator (as it appears in the seat's command, to be replaced by the worker's copy)."""

    sha256: str
    filename: str
    origin: str
    executable: bool = False


@dataclass(frozen=True)
class RemoteMatch:
    """One match as a Dask task: the task, each seat's artifact (None: nothing to fetch) and the
    coordinator's interpreter as it appears in the commands (replaced by the worker's own)."""

    task: MatchTask
    artifacts: tuple[Artifact | None, ...]
    python: str
    config: RefereeConfig | None = None
    live: LiveTarget | None = None  # the web hub's signed UDP endpoint (arena/live/remote.py)


class ClusterUnavailableError(TournamentError):
    """The Dask scheduler cannot be reached."""


class ArtifactMissingError(Exception):
    """A worker lacks bot artifacts: the coordinator sends them and submits the match again."""

    def __init__(self, worker: str, shas: list[str]) -> None:
        super().__init__(worker, shas)
        self.worker = worker
        self.shas = shas

    def __str__(self) -> str:
        return f"worker {self.worker or '?'} lacks artifacts {', '.join(s[:12] for s in self.shas)}"


# --------------------------------------------------------------------------- worker side

_verified: set[Path] = set()  # cached artifacts whose bytes this process checked
_host: WorkerThread | None = None
_host_lock = threading.Lock()


def artifact_path(sha256: str, filename: str) -> Path:
    """Where this machine keeps an artifact: ``ARENA_HOME/artifacts/<sha256>/<filename>``."""
    if not SHA_RE.match(sha256) or not filename or "/" in filename or filename in (".", ".."):
        raise ValueError(f"bad artifact reference {sha256!r}/{filename!r}")
    return arena_home().resolve() / "artifacts" / sha256 / filename


def _file_sha256(path: Path) -> str:
    h = hashlib.sha256()
    with path.open("rb") as fh:
        for chunk in iter(lambda: fh.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


def has_artifact(sha256: str, filename: str) -> bool:
    """Whether this machine's cache holds the artifact (its bytes checked once per process)."""
    path = artifact_path(sha256, filename)
    if path in _verified and path.is_file():
        return True
    try:
        ok = path.is_file() and _file_sha256(path) == sha256
    except OSError:
        ok = False
    if ok:
        _verified.add(path)
    return ok


def artifacts_present(wanted: list[tuple[str, str]]) -> list[str]:
    """Of ``(sha256, filename)`` pairs, the sha256 of those this worker already holds."""
    return [sha for sha, name in wanted if has_artifact(sha, name)]


def store_artifacts(blobs: dict[str, tuple[str, bytes, bool]]) -> list[str]:
    """Write artifacts (``sha256 -> (filename, bytes, executable)``) into this machine's cache,
    each checked against its sha256 before and after writing; return the sha256 written."""
    written = []
    for sha, (filename, data, executable) in blobs.items():
        target = artifact_path(sha, filename)
        if has_artifact(sha, filename):
            continue
        if hashlib.sha256(data).hexdigest() != sha:
            raise ValueError(f"artifact {sha[:12]} ({filename}): the bytes sent do not match their sha256")
        target.parent.mkdir(parents=True, exist_ok=True)
        tmp = target.parent / f".{filename}.{uuid.uuid4().hex}.tmp"  # unique: workers share caches
        try:
            tmp.write_bytes(data)
            mode = stat.S_IRUSR | stat.S_IRGRP | stat.S_IROTH
            if executable:
                mode |= stat.S_IXUSR | stat.S_IXGRP | stat.S_IXOTH
            os.chmod(tmp, mode)
            if _file_sha256(tmp) != sha:
                raise OSError(f"artifact {sha[:12]} ({filename}) was damaged while writing it to {tmp}")
            os.replace(tmp, target)
        finally:
            tmp.unlink(missing_ok=True)
        _verified.add(target)
        written.append(sha)
    return written


def _worker_address() -> str:
    try:
        return str(get_worker().address)
    except ValueError:  # not inside a Dask worker
        return ""


def localize(job: RemoteMatch) -> MatchTask:
    """The match with every seat's command pointing at this machine's interpreter and its copy
    of the artifact; :class:`ArtifactMissingError` when the cache lacks some."""
    missing: list[str] = []
    seats = []
    for seat, art in zip(job.task.seats, job.artifacts, strict=True):
        command = [sys.executable if part == job.python else part for part in seat.command]
        if art is not None:
            if not has_artifact(art.sha256, art.filename):
                missing.append(art.sha256)
            local = str(artifact_path(art.sha256, art.filename))
            command = [local if part == art.origin else part for part in command]
        seats.append(replace(seat, command=tuple(command)))
    if missing:
        raise ArtifactMissingError(_worker_address(), sorted(set(missing)))
    return replace(job.task, seats=tuple(seats))


def _worker_host(config: RefereeConfig | None) -> WorkerThread:
    """This process's referee and bot pool, started by its first match."""
    global _host
    with _host_lock:
        if _host is not None and _host.config != config:
            _host.close()
            _host = None
        if _host is None or _host.closed:
            _host = WorkerThread(None, config)
            atexit.register(close_host)
        return _host


def play_remote(job: RemoteMatch) -> MatchResult:
    """The Dask task: play one match on this worker and return its result."""
    task = localize(job)
    log_dir = arena_home().resolve() / "logs" / f"tournament-{task.tournament_id}"
    result = _worker_host(job.config).play(task, log_dir, job.live)
    return replace(result, extra={**result.extra, "worker": _worker_address()})


def release_bots(version_ids: list[int] | None = None) -> None:
    """Stop this worker's kept-running bots (of these versions) once no match uses them."""
    if _host is not None:
        _host.release(version_ids)


def close_host() -> None:
    """Stop this worker's bots and referee (at worker shutdown)."""
    global _host
    with _host_lock:
        host, _host = _host, None
    if host is not None:
        host.close()


class ArenaWorkerPlugin(WorkerPlugin):
    """Registered by the coordinator: reaps the worker's bots when the worker closes."""

    idempotent = True
    name = PLUGIN_NAME

    def teardown(self, worker: Worker) -> None:
        close_host()


PROFILER_CALLBACKS = ("profile", "profile-cycle")
"""The Dask worker's statistical profiler (a stack sample of its threads every 10 ms), for a
dashboard page that a match worker does not need: with it, the worker's main thread spent 38-48 ms
of CPU per match (one worker; 61-84 ms at two), without it 21-24 ms (``benchmarks/cluster.py``,
2026-12-02); :func:`quiet_worker` stops it."""


def quiet_worker(dask_worker: Worker) -> None:
    """Stop the Dask worker's profiler (:data:`PROFILER_CALLBACKS`); its other work is untouched."""
    for key in PROFILER_CALLBACKS:
        callback = dask_worker.periodic_callbacks.pop(key, None)
        if callback is not None:
            callback.stop()


class LocalWorkerSetup(WorkerPlugin):
    """A local cluster's worker setup, applied by the scheduler to every worker that joins, so
    also to one the nanny restarts after a crash: the profiler stopped (:func:`quiet_worker`),
    stop signals left to the coordinator (:func:`leave_stop_signals_to_the_nanny`) and, with
    ``cores``, the worker pinned to ``cores[name % len(cores)]`` (LocalCluster names its workers
    0, 1, ...; a restarted worker keeps its name, so it gets its old core back)."""

    idempotent = True
    name = "arena-local-worker-setup"

    def __init__(self, cores: tuple[int, ...] | None) -> None:
        self.cores = cores

    def setup(self, worker: Worker) -> None:
        quiet_worker(worker)
        leave_stop_signals_to_the_nanny()
        if not self.cores:
            return
        try:
            k = int(str(worker.name))
        except ValueError:
            k = 0
        affinity.pin_process(self.cores[k % len(self.cores)])


def _stop_is_the_nannys(_signum: int, _frame: object) -> None:
    """A local cluster worker's SIGINT, SIGTERM or SIGHUP: its nanny stops it.  Dask's own
    logging goes quiet meanwhile: the coordinator closes the scheduler as the stop's first step,
    and a heartbeat of this worker in that moment logged "Failed to communicate with scheduler
    during heartbeat" with a traceback (seen once in a clean-clone run)."""
    logging.getLogger("distributed").setLevel(logging.CRITICAL + 1)


def leave_stop_signals_to_the_nanny() -> None:
    """In a worker of a local cluster (``--local-cluster``): SIGINT, SIGTERM and SIGHUP do nothing
    here.  The worker shares the coordinator's process group, so a terminal's Ctrl-C or hang-up
    (or ``kill -TERM -PGID``) reaches it beside the coordinator, which stops the run and closes
    the cluster: the nanny then tells the worker to close (it stops its bots).  Acting on the
    signal itself, the worker died with a KeyboardInterrupt traceback (Ctrl-C), or died and was
    restarted by its nanny in the middle of the stop ("Restarting worker", SIGTERM and SIGHUP).
    A handler, not SIG_IGN, so that the bots it starts get the default actions.  A worker whose
    coordinator is killed outright still ends: Dask's child processes exit when their parent's
    pipe closes.  The worker was spawned with the three blocked (:func:`local_cluster`), so that
    a signal while it imported and connected was held (a Ctrl-C printed a traceback from its
    imports; a SIGTERM or SIGHUP killed it, and its nanny restarted it in the middle of the
    stop); they are unblocked here, once they mean nothing.  (A worker that never gets here, a
    failed start, is killed by its nanny with SIGKILL when the cluster closes.)  Does nothing
    outside the main thread (where signal handlers cannot be set)."""
    if threading.current_thread() is not threading.main_thread():
        return
    for sig in lifecycle.STOP_SIGNALS:
        if signal.getsignal(sig) != signal.SIG_IGN:
            signal.signal(sig, _stop_is_the_nannys)
    signal.pthread_sigmask(signal.SIG_UNBLOCK, set(lifecycle.STOP_SIGNALS))


def dask_setup(worker: Worker) -> None:
    """``--preload arena.tournament.cluster``: the worker's profiler stopped; nothing else to do
    until the first match."""
    quiet_worker(worker)


def dask_teardown(worker: Worker) -> None:
    """``--preload arena.tournament.cluster``: reap the worker's bots at shutdown."""
    close_host()


def listen_host(scheduler: str) -> str:
    """The address an ``arena worker`` listens on when not told: loopback when the scheduler is
    on this machine's loopback, else the local address of the interface that routes to the
    scheduler (never every interface unless asked).  :class:`ValueError` when the scheduler's
    host cannot be resolved."""
    target = scheduler if "://" in scheduler else f"tcp://{scheduler}"
    try:
        host, port = get_address_host_port(target)
    except ValueError as exc:
        raise ValueError(f"bad scheduler address {scheduler!r}: {exc}") from None
    try:
        family, _, _, _, sockaddr = socket.getaddrinfo(host, port, type=socket.SOCK_DGRAM)[0]
    except (OSError, UnicodeError) as exc:
        raise ValueError(f"cannot resolve the scheduler's host {host!r}: {exc}; give --host") from None
    ip = ipaddress.ip_address(str(sockaddr[0]).split("%", 1)[0])
    if ip.is_loopback:
        return str(ip)
    with socket.socket(family, socket.SOCK_DGRAM) as probe:  # nothing is sent: only routed
        try:
            probe.connect(sockaddr)
        except OSError as exc:
            raise ValueError(f"no route to the scheduler's host {host!r}: {exc}; give --host") from None
        return str(probe.getsockname()[0])


def worker_command(
    scheduler: str,
    nworkers: int,
    *,
    name: str | None = None,
    host: str | None = None,
    dashboard: str | None = None,
) -> list[str]:
    """The ``dask worker`` command line that serves matches (one at a time per process).

    The workers and their nannies listen on ``host`` only (default :func:`listen_host`: loopback
    for a scheduler on loopback); ``0.0.0.0`` or ``::`` means every interface.  ``dashboard``: the
    diagnostics dashboard's address (``PORT`` or ``:PORT`` binds ``host``; default: no dashboard,
    and the workers' HTTP health and metrics routes on a free port of ``host``).
    """
    host = host or listen_host(scheduler)
    argv = [
        sys.executable,
        "-m",
        "distributed.cli.dask_worker",
        scheduler,
        "--nworkers",
        str(nworkers),
        "--nthreads",
        "1",
        "--preload",
        __name__,
        "--host",
        host,
    ]
    # Each worker always serves HTTP (health and metrics routes; the dashboard's pages with
    # --dashboard), on every interface unless given an address: bind it to `host` too.
    http = dashboard if dashboard is not None else "0"
    port = http.removeprefix(":")
    if small_int(port) is not None:  # a port alone: on the workers' own interface
        http = f"[{host}]:{port}" if ":" in host else f"{host}:{port}"
    argv += ["--dashboard-address", http, "--no-dashboard" if dashboard is None else "--dashboard"]
    if name:
        argv += ["--name", name]
    return argv


# --------------------------------------------------------------------------- coordinator side


def artifacts_of(
    db: Database, tasks: Sequence[MatchTask], versions: Iterable[int] = ()
) -> dict[int, Artifact]:
    """The artifact of every bot version the tasks use (and of ``versions``: a tournament's
    whole field, whose later rounds are not made yet), by version id (remote bots have none)."""
    ids = {s.version_id for t in tasks for s in t.seats} | set(versions)
    out: dict[int, Artifact] = {}
    with db.session() as session:
        for v in session.exec(select(BotVersion).where(col(BotVersion.id).in_(ids))).all():
            if v.id is not None and v.kind == "local" and v.artifact:
                origin = str(stored_artifact(v))  # stored relative to the data directory
                out[v.id] = Artifact(v.sha256, v.filename, origin, os.access(origin, os.X_OK))
    return out


@dataclass
class ClusterStats:
    """What a cluster run did besides playing: artifacts sent and matches sent back."""

    uploads: list[tuple[str, str]] = field(default_factory=list)  # (worker, sha256), each sent
    requeued: Counter[str] = field(default_factory=Counter)  # reason -> matches sent back
    workers: set[str] = field(default_factory=set)  # workers that returned a result


class DaskExecutor:
    """The :class:`~arena.tournament.runner.MatchExecutor` of a Dask cluster.

    Keeps ``oversubscribe`` matches per worker thread in flight, so a worker never waits for the
    coordinator between two matches.
    """

    def __init__(
        self,
        client: Client,
        artifacts: dict[int, Artifact],
        config: RefereeConfig | None = None,
        *,
        oversubscribe: int = 2,
        poll: float = 1.0,
        reconnect_timeout: float = 60.0,
        live: Callable[[], LiveTarget | None] | None = None,
    ) -> None:
        self.client = client
        self.live = live  # the hub's UDP endpoint now, sent with each task (None: not followed live)
        self._advertised: str | None = None  # this host's address towards the scheduler, once asked
        self.artifacts = artifacts
        self.config = config
        self.oversubscribe = oversubscribe
        self.poll = poll
        self.reconnect_timeout = reconnect_timeout
        self.stats = ClusterStats()
        self._done: queue.Queue[Future[MatchResult]] = queue.Queue()
        self._inflight: set[Future[MatchResult]] = set()
        self._blobs: dict[str, bytes] = {}
        self._threads = (0, 0.0)  # worker threads, when last asked

    # ----------------------------------------------------------------- artifacts

    def _blob(self, art: Artifact) -> bytes:
        data = self._blobs.get(art.sha256)
        if data is None:
            data = Path(art.origin).read_bytes()
            if hashlib.sha256(data).hexdigest() != art.sha256:
                raise TournamentError(
                    f"the stored artifact {art.origin} does not match its sha256 {art.sha256[:12]}: "
                    f"re-register the bot"
                )
            self._blobs[art.sha256] = data
        return data

    def _send(self, worker: str, arts: list[Artifact]) -> None:
        blobs = {a.sha256: (a.filename, self._blob(a), a.executable) for a in arts}
        self.client.run(store_artifacts, blobs, workers=[worker])
        self.stats.uploads += [(worker, sha) for sha in blobs]

    def sync_artifacts(self) -> None:
        """Send every connected worker the artifacts its cache lacks (asking first)."""
        arts = {a.sha256: a for a in self.artifacts.values()}
        if not arts:
            return
        wanted = [(a.sha256, a.filename) for a in arts.values()]
        present: dict[str, Any] = self.client.run(artifacts_present, wanted, on_error="return")
        for worker, have in present.items():
            if isinstance(have, BaseException):
                log.warning("worker %s did not answer about artifacts: %s", worker, have)
                continue
            missing = [a for sha, a in arts.items() if sha not in have]
            if missing:
                self._send(worker, missing)

    def _supply(self, exc: ArtifactMissingError) -> None:
        """A worker reported missing artifacts with a match (it joined after the run started,
        or the report crossed an upload): send it those it still lacks.  Sending one a second
        time happens only if its cache lost it; a third time is an error."""
        arts = {a.sha256: a for a in self.artifacts.values()}
        wanted = [arts[s] for s in exc.shas if s in arts]
        try:
            answer = self.client.run(
                artifacts_present, [(a.sha256, a.filename) for a in wanted], workers=[exc.worker]
            )
            have = set(answer.get(exc.worker, []))
            missing = [a for a in wanted if a.sha256 not in have]
            sent = Counter(self.stats.uploads)
            if any(sent[(exc.worker, a.sha256)] >= 2 for a in missing):
                raise TournamentError(f"{exc}, though they were sent to it twice: check its ARENA_HOME")
            if missing:
                self._send(exc.worker, missing)
        except TournamentError:
            raise
        except Exception as err:  # e.g. the worker is gone since: the match will run elsewhere
            log.warning("could not send artifacts to %s: %s", exc.worker, err)

    def check_sandbox(self) -> None:
        """Refuse to run sandboxed matches on workers where bubblewrap cannot run."""
        problems: dict[str, Any] = self.client.run(bwrap_problem, on_error="return")
        bad = {w: p for w, p in problems.items() if p is not None}
        if bad:
            worker, problem = next(iter(bad.items()))
            raise SandboxUnavailableError(
                f"cannot sandbox bots on worker {worker} ({len(bad)} of {len(problems)} workers): "
                f"{problem}. Install bubblewrap there, or run only bots you trust with --no-sandbox."
            )

    # ----------------------------------------------------------------- MatchExecutor

    def slots(self) -> int:
        threads, when = self._threads
        now = time.monotonic()
        if now - when > 2.0:
            try:
                threads = sum(self.client.nthreads().values())  # type: ignore[no-untyped-call]
            except Exception as exc:  # the scheduler is away: keep the last count
                log.warning("could not count the workers: %s", exc)
            self._threads = (threads, now)
        return max(1, threads * self.oversubscribe)

    def _connected(self) -> None:
        deadline = time.monotonic() + self.reconnect_timeout
        while self.client.status != "running":
            if self.client.status in ("closing", "closed") or time.monotonic() > deadline:
                raise TournamentError(f"lost the Dask scheduler (client {self.client.status})")
            time.sleep(0.2)

    def submit(self, task: MatchTask) -> Hashable:
        self._connected()
        job = RemoteMatch(
            task,
            tuple(self.artifacts.get(s.version_id) for s in task.seats),
            sys.executable,
            self.config,
            self._live_target(),
        )
        fut = self.client.submit(play_remote, job, key=f"arena-{task.key}-{uuid.uuid4().hex[:8]}", pure=False)
        self._inflight.add(fut)
        fut.add_done_callback(self._done.put)  # type: ignore[no-untyped-call]
        return fut

    def _live_target(self) -> LiveTarget | None:
        """The hub's UDP endpoint for the next task; one bound to every interface (0.0.0.0,
        ::) is given as this host's address towards the scheduler (the workers' side)."""
        target = self.live() if self.live is not None else None
        if target is None:
            return None
        try:
            unspecified = ipaddress.ip_address(target.host).is_unspecified
        except ValueError:  # a host name
            return target
        if not unspecified:
            return target
        if self._advertised is None:
            try:
                self._advertised = listen_host(str(self.client.scheduler.address))  # type: ignore[union-attr]
            except (ValueError, AttributeError) as exc:
                log.warning("live events off: no address of this host towards the scheduler: %s", exc)
                return None
        return replace(target, host=self._advertised)

    def wait(self, handles: Sequence[Hashable]) -> list[tuple[Hashable, Outcome]]:
        try:
            batch = [self._done.get(timeout=self.poll)]
        except queue.Empty:
            return []
        while True:
            try:
                batch.append(self._done.get_nowait())
            except queue.Empty:
                break
        wanted = set(handles)
        out: list[tuple[Hashable, Outcome]] = []
        for fut in batch:
            if fut in wanted and fut in self._inflight:
                self._inflight.discard(fut)
                outcome = self._outcome(fut)
                if isinstance(outcome, Requeue):
                    self.stats.requeued[outcome.reason.split(":")[0]] += 1
                out.append((fut, outcome))
        return out

    def _outcome(self, fut: Future[MatchResult]) -> Outcome:
        status = fut.status
        if status == "finished":
            try:
                result = fut.result(timeout=60)
            except (CancelledError, OSError, TimeoutError) as exc:
                return Requeue(f"result lost: {exc}", counted=False)
            if not isinstance(result, MatchResult):
                return TypeError(f"a worker returned {type(result).__name__}, not a MatchResult")
            self.stats.workers.add(str(result.extra.get("worker", "?")))
            return result
        if status == "error":
            error = fut.exception()  # type: ignore[no-untyped-call]
            if isinstance(error, KilledWorker):
                return Requeue(f"workers died: {error}")
            if isinstance(error, ArtifactMissingError):
                self._supply(error)
                return Requeue(f"artifacts missing: {error}", counted=False)
            if isinstance(error, BaseException):
                return error
            return RuntimeError(f"the match task failed: {error!r}")
        return Requeue(f"task {status}: the scheduler connection was lost", counted=False)

    def restart(self) -> None:
        """Nothing to restart: Dask replaces lost workers by itself."""

    def close(self) -> None:
        if self._inflight and self.client.status == "running":
            self.client.cancel(list(self._inflight))  # type: ignore[no-untyped-call]
        self._inflight.clear()


def live_endpoint(db: Database) -> Callable[[], LiveTarget | None]:
    """What tells a :class:`DaskExecutor` where its matches' live events go: the signed UDP
    endpoint of the web hub of ``db`` on this machine, as its endpoint file states it now."""
    return EndpointWatch(endpoint_path(socket_path(db.url))).current


@dataclass(frozen=True)
class SchedulerProblem:
    """Why no Dask scheduler answers at an address: ``text`` says it; ``lasting`` when waiting
    cannot help (a malformed address, or something else listening there), not when nothing
    accepts the connection yet (a scheduler still starting, or one on its way back)."""

    text: str
    lasting: bool


def scheduler_problem(address: str, timeout: float = 5.0) -> SchedulerProblem | None:
    """None when a Dask scheduler answers at ``address`` (``tcp://HOST:PORT``, ``tls://...`` or
    ``HOST:PORT``) within ``timeout`` seconds, else why not (see :class:`SchedulerProblem`)."""
    rest = address.split("://", 1)[-1]
    host, _, port = rest.rpartition(":")
    host = host.strip("[]")
    number = small_int(port)
    if not host or number is None:
        return SchedulerProblem("not an address of the form tcp://HOST:PORT", lasting=True)
    try:
        socket.create_connection((host, number), timeout=timeout).close()
    except OSError as exc:
        return SchedulerProblem(str(exc) or type(exc).__name__, lasting=False)
    problem = _not_dask(address, timeout)
    return None if problem is None else SchedulerProblem(problem, lasting=True)


def check_scheduler(address: str, timeout: float = 5.0) -> None:
    """:class:`ClusterUnavailableError` unless a Dask scheduler answers at ``address`` within
    ``timeout`` seconds (:func:`scheduler_problem`): checked before a tournament is created for
    the cluster, so that an unreachable one leaves nothing behind (Dask's own client waits 30 s,
    after the creation)."""
    problem = scheduler_problem(address, timeout)
    if problem is not None:
        raise ClusterUnavailableError(
            f"cannot reach the Dask scheduler at {address}: {problem.text}. Start one with "
            f"'dask scheduler' and workers with 'arena worker --scheduler ADDRESS'."
        )


def _not_dask(address: str, timeout: float) -> str | None:
    """Why what listens at ``address`` is not a Dask scheduler (None when it answers Dask's
    handshake within ``timeout`` s, or when the address is not ``tcp://``: TLS needs the
    client's certificates).  Dask's own client waits for the handshake forever when something
    else listens (a web server), and reading garbage as a frame length raised a MemoryError."""
    import asyncio

    if "://" in address and not address.startswith("tcp://"):
        return None

    async def probe() -> None:
        from distributed.comm.core import connect as open_comm

        comm = await asyncio.wait_for(open_comm(address, timeout=timeout), timeout)  # type: ignore[no-untyped-call]
        await comm.close()

    answer: list[str | None] = []

    def run() -> None:  # a thread of its own: the caller may be inside an event loop
        try:
            asyncio.run(probe())
            answer.append(None)
        except (OSError, TimeoutError):
            answer.append(f"it did not answer as a Dask scheduler within {timeout:g} s")
        except Exception:  # garbage read as Dask's protocol: any error there says the same
            answer.append("what listens there does not speak Dask's protocol (another service?)")

    thread = threading.Thread(target=run, name="arena-scheduler-probe", daemon=True)
    thread.start()
    thread.join(timeout + 5.0)
    if not answer:
        return f"it did not answer as a Dask scheduler within {timeout:g} s"
    return answer[0]


def connect(address: str) -> Client:
    """A client of the scheduler at ``address``, or :class:`ClusterUnavailableError`.

    The address is checked first (:func:`check_scheduler`: its form, and a connection within
    5 s): Dask's client takes 30 s to give up on an unreachable scheduler, and one made from a
    malformed address (``nonsense``, no port) raised a ``ValueError`` and then, collected at
    exit, waited 60 s more and printed a ``TimeoutError`` traceback."""
    check_scheduler(address)
    try:
        return Client(address, set_as_default=False)  # type: ignore[no-untyped-call]
    except (OSError, ValueError) as exc:
        raise ClusterUnavailableError(
            f"cannot reach the Dask scheduler at {address}: {exc}. Start one with "
            f"'dask scheduler' and workers with 'arena worker --scheduler ADDRESS'."
        ) from None


@contextmanager
def _client(client_or_address: Client | str) -> Iterator[Client]:
    if isinstance(client_or_address, str):
        client = connect(client_or_address)
        try:
            yield client
        finally:
            client.close()  # type: ignore[no-untyped-call]
    else:
        yield client_or_address


@contextmanager
def local_cluster(workers: int, pin: bool | None = None) -> Iterator[Client]:
    """A Dask cluster of ``workers`` processes on this machine (one match at a time each), and
    a client of it; both are closed afterwards.  Its workers are pinned to a core each as local
    workers are (:mod:`arena.tournament.affinity`; ``pin`` None: by ``ARENA_PIN_WORKERS``) and
    run without Dask's profiler (:func:`quiet_worker`), a worker the nanny restarts after a crash
    too (:class:`LocalWorkerSetup`)."""
    lifecycle.start_resource_tracker()  # before the nannies' queues and locks: a SIGHUP spares it
    # The cluster's event loop thread starts here and keeps this thread's mask: every worker
    # process it spawns (a restarted one too) starts with SIGINT, SIGTERM and SIGHUP blocked, so
    # a signal to the whole group while the worker imports Dask and joins is held (a Ctrl-C
    # printed a KeyboardInterrupt traceback from its imports, or left the worker unanswering
    # until its nanny killed it 4 s later; a SIGTERM or SIGHUP killed it and its nanny restarted
    # it mid-stop) until the worker's setup has made them harmless
    # (leave_stop_signals_to_the_nanny).  This process's main thread still gets them.
    with interrupts_held(lifecycle.STOP_SIGNALS):
        cluster = LocalCluster(  # type: ignore[no-untyped-call]
            n_workers=workers,
            threads_per_worker=1,
            processes=True,
            host="127.0.0.1",  # scheduler and workers on loopback only
            dashboard_address=None,
            # The scheduler's HTTP server (health and metrics; no dashboard) on a free port of
            # loopback: on Dask's default 8787 a second local cluster on the machine (or anything
            # else there) made Dask warn "Port 8787 is already in use" in the middle of the run.
            scheduler_kwargs={"dashboard": False, "dashboard_address": "127.0.0.1:0"},
            silence_logs=logging.ERROR,
        )
    try:
        client = Client(cluster, set_as_default=False)  # type: ignore[no-untyped-call]
        try:
            client.wait_for_workers(workers)
            client.register_plugin(LocalWorkerSetup(affinity.wanted(workers, pin)))
            yield client
        finally:
            client.close()  # type: ignore[no-untyped-call]
    finally:
        # On a loaded machine a worker may take over 4 s to stop its bots; its nanny then kills it
        # and Dask logged "Worker process still alive after 4.0 seconds, killing" below the run's
        # own last line (seen under four test processes on two cores).  Its bots end with it.
        dask_log = logging.getLogger("distributed")
        level = dask_log.level
        dask_log.setLevel(logging.CRITICAL + 1)
        try:
            cluster.close()
        finally:
            dask_log.setLevel(level)


def run_tournament_on_cluster(
    db: Database,
    tournament_id: int,
    client_or_address: Client | str,
    *,
    progress: ProgressFn | None = None,
    config: RefereeConfig | None = None,
    stop_after: int | None = None,
    release: bool = True,
    wait: bool = False,
    on_wait: Callable[[LeaseHolder], None] | None = None,
) -> ClusterStats:
    """Play every queued match of the tournament on a Dask cluster (a ``Client`` or a scheduler
    address such as ``tcp://HOST:8786``), this process being the one writer of the database.

    The tournament's lease is taken first, as by a local run (``wait``, ``on_wait``: see
    :func:`arena.tournament.runner.run_tournament`), and held to the end.  ``release`` stops the
    tournament's kept-running bots on the workers at the end.  Returns what was sent where
    (:class:`ClusterStats`).
    """
    get_tournament(db, tournament_id)
    with coordinator_lease(db, tournament_id, wait=wait, on_wait=on_wait) as lease:
        reap_dead_run(run_path(db.url, tournament_id))  # a local run of it that died here
        return _run_on_cluster(
            db, tournament_id, client_or_address, progress, config, stop_after, release, lease.check
        )


def _run_on_cluster(
    db: Database,
    tournament_id: int,
    client_or_address: Client | str,
    progress: ProgressFn | None,
    config: RefereeConfig | None,
    stop_after: int | None,
    release: bool,
    guard: Callable[[], None],
) -> ClusterStats:
    tasks = open_run(db, tournament_id)
    entrants = field_versions(db, tournament_id)  # a Swiss or knockout's later rounds come later
    with _client(client_or_address) as client:
        client.register_plugin(ArenaWorkerPlugin(), name=PLUGIN_NAME)
        executor = DaskExecutor(client, artifacts_of(db, tasks, entrants), config, live=live_endpoint(db))
        if tournament_sandbox(db, tournament_id) is not None:
            executor.check_sandbox()
        executor.sync_artifacts()
        try:
            coordinate(
                db,
                tournament_id,
                tasks,
                executor,
                progress=progress,
                stop_after=stop_after,
                hint="Check the workers' logs. ",
                guard=guard,
            )
        finally:
            if release and entrants:
                versions = sorted(entrants)
                try:
                    client.run(release_bots, versions, on_error="ignore")
                except Exception as exc:  # the tournament's results are safe; the bots idle on
                    log.warning("could not release the bots on the workers: %s", exc)
        return executor.stats
