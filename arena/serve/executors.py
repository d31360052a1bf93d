"""The match executor a service plays on: local worker processes, or a Dask cluster."""

from __future__ import annotations

from collections.abc import Hashable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path

from arena.live.channel import socket_path
from arena.store.db import Database, arena_home
from arena.store.tournaments import MatchTask
from arena.tournament.runner import LocalExecutor, MatchExecutor, Outcome


class ClusterMatches:
    """A :class:`~arena.tournament.cluster.DaskExecutor` whose artifacts are looked up as tasks
    come (uploads appear while the server runs)."""

    def __init__(self, db: Database, address: str) -> None:
        from arena.tournament.cluster import (
            PLUGIN_NAME,
            ArenaWorkerPlugin,
            DaskExecutor,
            connect,
            live_endpoint,
        )

        self.db = db
        self.client = connect(address)  # an unreachable or malformed address: one clear error
        self.client.register_plugin(ArenaWorkerPlugin(), name=PLUGIN_NAME)
        self.inner = DaskExecutor(self.client, {}, live=live_endpoint(db))  # matches watched live

    def slots(self) -> int:
        return self.inner.slots()

    def submit(self, task: MatchTask) -> Hashable:
        from arena.tournament.cluster import artifacts_of

        self.inner.artifacts.update(artifacts_of(self.db, [task]))
        return self.inner.submit(task)

    def wait(self, handles: Sequence[Hashable]) -> list[tuple[Hashable, Outcome]]:
        return self.inner.wait(handles)

    def restart(self) -> None:
        self.inner.restart()

    def close(self) -> None:
        try:
            self.inner.close()
        finally:
            self.client.close()  # type: ignore[no-untyped-call]


@contextmanager
def executor_for(
    db: Database, *, jobs: int, cluster: str | None, log_dir: Path | None
) -> Iterator[MatchExecutor]:
    """``jobs`` local worker processes (they die with this process), or the cluster at
    ``cluster``; aborted (local) or closed when the block ends."""
    if cluster:
        remote = ClusterMatches(db, cluster)
        try:
            yield remote
        finally:
            remote.close()
        return
    live = str(socket_path(db.url))  # validation matches are followed live like the ladder's
    local = LocalExecutor(jobs, log_dir or arena_home() / "logs" / "serve", None, live_socket=live)
    try:
        yield local
    finally:
        local.abort()
