"""Limits that keep a bot's connections from costing the referee more than a bounded share.

Every bot may run up to the sandbox's processes, each with its own open files, and each file may
be a connection to the referee.  Two things keep that bounded:

* :func:`prepare_open_files` (:func:`raise_open_files_limit`): the referee's process takes the
  hard limit of open files as its soft limit (often 1024 by default, against a hard limit of a
  million; a hard limit too low is logged once), so a bot holding a few
  thousand connections cannot leave the referee unable to accept its opponent's (which would be
  judged a no-show);
* :data:`MAX_STREAMS_PER_CONNECTION`: a connection carries at most this many concurrent streams
  (a bot needs one Play stream), and the health service answers ``Check`` only
  (:class:`CheckOnlyHealth`): its ``Watch`` streams stayed open for as long as a bot liked, about
  25 KB of the referee's memory each, outside the bot's own memory limit;
* :data:`IDLE_CONNECTION_MS` and :data:`HANDSHAKE_TIMEOUT_MS` (the defaults of
  :class:`arena.referee.server.RefereeConfig`): a connection that carries no stream is closed
  after a minute, and one that has not finished its HTTP/2 (and TLS) handshake after 20 s (gRPC's
  own default is two minutes), so connections opened and left lying, by a local bot or by anyone
  who can reach the remote-bot listener, are given back.  This bounds how long an idle
  connection costs the referee, not how many one client may open at once;
* :data:`LISTEN_CONNECTIONS` (``RefereeConfig.listen_connections``, lowered by :func:`listen_cap`
  when the open-files limit is low): the remote-bot listener is
  a gRPC server of its own, and it holds at most this many connections at once (gRPC's
  ``max_allowed_incoming_connections``: one more is accepted and closed at once, so it costs no
  open file).  A client flooding the listener can keep other remote bots from connecting while
  the flood lasts, but it cannot use up the process's open files: the local bots' socket, the
  web app and the database keep working (see README, "Security model").
"""

from __future__ import annotations

import logging
import resource

import grpc
from grpc_health.v1 import health, health_pb2

log = logging.getLogger(__name__)

MAX_STREAMS_PER_CONNECTION = 16
"""Concurrent streams one HTTP/2 connection may open (HTTP/2's SETTINGS_MAX_CONCURRENT_STREAMS)."""


IDLE_CONNECTION_MS = 60_000
"""A connection without a stream for this long is closed (gRPC's ``max_connection_idle_ms``)."""

HANDSHAKE_TIMEOUT_MS = 20_000
"""A connection whose handshake is not done by then is dropped (``server_handshake_timeout_ms``)."""


LISTEN_CONNECTIONS = 1024
"""Connections the remote-bot listener holds at once (all clients together)."""


ENOUGH_FILES = 64 * 256 + 1024
"""Open files above what one sandboxed bot may hold (64 processes x 256 files, the default
:class:`arena.sandbox.limits.SandboxLimits`), with room for the rest of the referee."""


def open_files_warning(soft: int) -> str | None:
    """What to tell the operator when the referee's limit of open files (``soft``, already raised
    to the hard limit) is below :data:`ENOUGH_FILES`, else None."""
    if soft >= ENOUGH_FILES:
        return None
    return (
        f"this process may open only {soft} files (its hard limit): a sandboxed bot may hold up to "
        f"64 x 256 connections and so keep its opponent from connecting (a no-show). Raise the hard "
        f"limit (ulimit -Hn, systemd's LimitNOFILE=) to {ENOUGH_FILES} or more."
    )


def raise_open_files_limit() -> tuple[int, int]:
    """Raise this process's soft limit of open files to its hard limit (never lower it); return
    the (soft, hard) limits now in force.  A limit the system refuses to raise stays as it was."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if hard == resource.RLIM_INFINITY or soft < hard:
        target = hard if hard != resource.RLIM_INFINITY else max(soft, 1 << 20)
        try:
            resource.setrlimit(resource.RLIMIT_NOFILE, (target, hard))
        except (ValueError, OSError):
            return soft, hard
        return target, hard
    return soft, hard


LISTEN_RESERVE = 512
"""Open files the remote-bot listener's cap always leaves to the rest of the process."""


def listen_cap(requested: int, soft: int) -> int:
    """The remote-bot listener's cap in a process that may open ``soft`` files: ``requested``,
    but at most half of what :data:`LISTEN_RESERVE` leaves (so a flood there never takes the
    files the web app, the local bots and the database need), and at least 1."""
    return max(1, min(requested, (soft - LISTEN_RESERVE) // 2))


def listen_cap_warning(requested: int, cap: int, soft: int) -> str | None:
    """What to tell the operator when the open-files limit lowered the listener's cap."""
    if cap >= requested:
        return None
    return (
        f"the remote-bot listener holds at most {cap} connections, not {requested}: this process may "
        f"open only {soft} files. Raise the hard limit (ulimit -Hn, systemd's LimitNOFILE=) to allow more."
    )


class CheckOnlyHealth(health.aio.HealthServicer):
    """The standard gRPC health service without ``Watch`` (``UNIMPLEMENTED``, which the health
    protocol tells clients to expect): ``Check`` answers as before."""

    async def Watch(
        self,
        request: health_pb2.HealthCheckRequest,
        context: grpc.aio.ServicerContext[health_pb2.HealthCheckRequest, health_pb2.HealthCheckResponse],
    ) -> None:
        await context.abort(
            grpc.StatusCode.UNIMPLEMENTED, "Watch is not offered by the referee: call Check (it is cheap)"
        )


_told = False


def prepare_open_files() -> None:
    """At a referee's start: :func:`raise_open_files_limit`, and the :func:`open_files_warning`
    logged once per process when the limit stays too low."""
    global _told
    soft, _ = raise_open_files_limit()
    warning = open_files_warning(soft)
    if warning is not None and not _told:
        _told = True
        log.warning("%s", warning)
