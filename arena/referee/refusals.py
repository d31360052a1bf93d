"""Noticing that gRPC refused a bot's message (over the transport's receive limit).

A message longer than ``grpc.max_receive_message_length`` never reaches the referee's code:
gRPC C-core reads its length prefix, refuses it, answers the bot ``RESOURCE_EXHAUSTED`` and
cancels the call.  On the server side grpc.aio then ends the request iterator exactly as if the
bot had closed its side or the connection had dropped, so the referee would judge the seat
``disconnected`` (or ``crashed``, ``timeout``) instead of ``malformed-action``.

What does tell them apart: for a refused message the pending *receive operation fails*, while a
closed side, a cancelled call, a dropped connection or a keepalive timeout end it cleanly (checked
for grpcio 1.85; ``tests/referee/test_oversize.py`` fails should a grpcio release change this).
grpc.aio reports the failed receive only as a DEBUG record, ``Failed to receive any message from
Core``, on the logger ``grpc._cython.cygrpc``, emitted inside the task that was reading the
stream.  :func:`watch_receives` installs a filter on that logger (once) and returns a
:class:`ReceiveWatch` that such a record marks when it is logged from the calling task's context.

The filter keeps the logger's visible behaviour: a record it lets through is one the logger
would have passed anyway (DEBUG records reach handlers only when the parent loggers' level
allows them, as before).

One record it demotes to DEBUG (one line, without its traceback): grpc.aio's ERROR
``ExecuteBatchError raised in core by servicer method [/arena.v1.Referee/Play]``, logged when a
write to a bot's stream is still pending as the call ends.  A bot causes it at will: it stops
reading (a flow-control window it never widens) and goes away.  The match does not wait for
writes (its clock runs from the request, and the seat forfeits as ``timeout``), so nothing of the
referee failed; as an ERROR with a traceback of gRPC's internals, on every ``arena match``
against such a bot, it read as a crashed referee (``tests/referee/test_stalled_reader.py``).
"""

from __future__ import annotations

import logging
from contextvars import ContextVar
from dataclasses import dataclass

GRPC_LOGGER = "grpc._cython.cygrpc"
FAILED_RECEIVE = "Failed to receive any message from Core"
FAILED_PLAY_WRITE = "ExecuteBatchError raised in core by servicer method [/arena.v1.Referee/Play]"


@dataclass
class ReceiveWatch:
    """Set by the log record of a failed receive in the task that created it."""

    failed: bool = False


_watch: ContextVar[ReceiveWatch | None] = ContextVar("arena_receive_watch", default=None)


class _FailedReceiveFilter(logging.Filter):
    """Marks the current task's :class:`ReceiveWatch` on a failed-receive record; demotes a Play
    stream's failed write to DEBUG; lets a record through only when the logger would have without
    this filter's DEBUG level."""

    def __init__(self, logger: logging.Logger, level: int) -> None:
        super().__init__()
        self.logger = logger
        self.level = level  # the logger's own level before it was lowered to DEBUG

    def filter(self, record: logging.LogRecord) -> bool:
        if record.levelno == logging.DEBUG and str(record.msg).startswith(FAILED_RECEIVE):
            watch = _watch.get()
            if watch is not None:
                watch.failed = True
        elif record.levelno >= logging.ERROR and record.getMessage() == FAILED_PLAY_WRITE:
            record.levelno, record.levelname = logging.DEBUG, logging.getLevelName(logging.DEBUG)
            record.exc_info, record.exc_text = None, None  # the bot stopped reading: no arena bug
        parent = self.logger.parent
        threshold = self.level or (parent.getEffectiveLevel() if parent is not None else logging.WARNING)
        return record.levelno >= threshold


_installed: _FailedReceiveFilter | None = None


def install() -> None:
    """Lower grpc's Cython logger to DEBUG behind the filter (idempotent)."""
    global _installed
    if _installed is not None:
        return
    logger = logging.getLogger(GRPC_LOGGER)
    _installed = _FailedReceiveFilter(logger, logger.level)
    logger.addFilter(_installed)
    logger.setLevel(logging.DEBUG)


def watch_receives() -> ReceiveWatch:
    """A watch that a failed receive in the calling task (and the tasks it creates later) marks.

    Call it in the task that iterates the request stream, before iterating."""
    install()
    watch = ReceiveWatch()
    _watch.set(watch)
    return watch
