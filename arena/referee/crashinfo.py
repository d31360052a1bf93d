"""What a crashed bot said: its exception line, found in the tail of its stderr.

A forfeit for a crash reads, for example, ``the process exited with status 1 before connecting:
SyntaxError: invalid syntax``: how the process ended, when, and the error it printed last.
"""

from __future__ import annotations

import re
from typing import Any

EXCEPTION_LINE = re.compile(
    r"^(?:Uncaught )?(?:[A-Za-z_][\w]*\.)*[A-Za-z_]*(?:Error|Exception|Interrupt|Exit|Fault)"
    r"(?: \[\w+\])?(?::\s.*)?$"  # Python's ``ValueError: x``, Node's ``TypeError [ERR_X]: x``, Java's
    r"|^Exception in thread .*"  # Java's uncaught exception
    r"|^(?:panic|fatal error|error(?:\[\w+\])?): .+"  # Go's panic, C/Rust/Go fatal errors
    r"|^thread '.*' panicked at .*"  # Rust's panic
    r"|^terminate called after throwing .*"  # C++'s uncaught exception
)
# lines that frame an error rather than state it: stack frames, source excerpts, runtime banners,
# the properties and brackets of Node's printed error object, Node's require stack
NOISE = re.compile(
    r"^(?:File \"|at |Traceback \(|Node\.js v|\^+$|~+$|\[arena: |Require stack:$|- /|node:internal"
    r"|goroutine \d+ |note: run with )"
    r"|^[\]}),;{\[]+$"
    r"|^[a-z_]\w*: (?:'.*'|\".*\"|-?\d+|\[.*|\{.*|true|false|null|undefined),?$"
)
# Python gRPC's printed RpcError: a first line naming the class (``grpc._channel._MultiThreadedRendezvous:
# <_MultiThreadedRendezvous of RPC that terminated with:``), then ``status = StatusCode.X`` and
# ``details = "..."`` on lines of their own, then ``>``
GRPC_ERROR = re.compile(r"^([\w.]+): <\w+ of RPC that terminated with:$")
GRPC_STATUS = re.compile(r"^status = StatusCode\.(\w+)$")
GRPC_DETAILS = re.compile(r'^details = "(.*)"$')
LINE_LIMIT = 300
GENERIC_STREAM_END = "the stream ended"
CRASHED = "crashed"  # the termination of a crash (arena.endings' word; this module imports nothing)
STDERR_HIDDEN = " (the bot's last stderr line is shown to its owner)"


def exception_line(stderr_tail: str) -> str | None:
    """The line of ``stderr_tail`` that names the bot's error, or None when it wrote nothing.

    The last line that looks like an exception or a fatal error (``ZeroDivisionError: division by
    zero``, ``SyntaxError: invalid syntax``, Node's ``Error: Cannot find module 'x'``, Java's
    ``Exception in thread "main" ...``, Go's ``panic: ...``, Rust's ``thread 'main' panicked at
    ...``), else the last non-empty line that is not a stack frame, a runtime banner or a piece of
    a printed error object, else the last non-empty line; at most 300 chars.
    """
    lines = [line.strip() for line in stderr_tail.splitlines() if line.strip()]
    if not lines:
        return None
    for k in range(len(lines) - 1, -1, -1):
        line = lines[k]
        if grpc := GRPC_ERROR.match(line):  # its status and details, not the class's first line
            return _grpc_error(grpc.group(1), lines[k + 1 : k + 4])[:LINE_LIMIT]
        if EXCEPTION_LINE.match(line):
            follow = lines[k + 1] if k + 1 < len(lines) else ""
            if follow and not NOISE.match(follow) and (line.endswith(":") or follow.startswith("what():")):
                line = f"{line} {follow}"  # Rust's panic message, C++'s what(), on the next line
            return line[:LINE_LIMIT]
    for line in reversed(lines):
        if not NOISE.match(line):
            return line[:LINE_LIMIT]
    return lines[-1][:LINE_LIMIT]


def _grpc_error(name: str, following: list[str]) -> str:
    """Python gRPC's RpcError in one line: ``NAME: the call ended with UNAUTHENTICATED: unknown or
    expired token`` from the ``status =`` and ``details =`` lines that follow its first line."""
    status = next((m.group(1) for line in following if (m := GRPC_STATUS.match(line))), None)
    details = next((m.group(1) for line in following if (m := GRPC_DETAILS.match(line))), None)
    if status is None:
        return f"{name}: the call ended"
    return f"{name}: the call ended with {status}" + (f": {details}" if details else "")


def crash_detail(
    how: str, stderr_tail: str, *, before_connecting: bool = False, stream: str | None = None
) -> str:
    """The forfeit detail of a crash, said once.

    ``how`` is the process's end (``the process exited with status 1``); the exception line of
    ``stderr_tail`` follows it; ``stream`` (how the bot's stream ended) is added only when it
    says more than that the stream ended.
    """
    text = how + (" before connecting" if before_connecting else "")
    line = exception_line(stderr_tail)
    if line:
        text += f": {line}"
    elif before_connecting and how.endswith("with status 0"):  # a clean exit that never connected
        text += " (it ended without an error and never connected: does the script start its bot, e.g. run()?)"
    if stream and not stream.startswith(GENERIC_STREAM_END):
        text += f" (stream: {stream})"
    return text


def without_stderr(detail: str) -> str:
    """A crash's forfeit detail as anyone but the bot's owner sees it: cut before the first
    ``": "`` (what follows is the line the bot printed, and how its stream ended), with
    :data:`STDERR_HIDDEN` said instead; a detail without a printed line is kept as it is.  What a
    bot writes on stderr may hold its author's secrets: the seats it played against (and the
    people who watch) are told how it ended, not what it said."""
    head, sep, _rest = detail.partition(": ")
    return head + STDERR_HIDDEN if sep else detail


def public_detail(termination: str | None, detail: str | None) -> str | None:
    """A seat's forfeit detail as anyone but the bot's owner sees it: a ``crashed`` one by
    :func:`without_stderr`, any other as it is."""
    if termination != CRASHED or not detail:
        return detail
    return without_stderr(detail)


def public_forfeit(forfeit: Any) -> Any:
    """A record's forfeit (its JSON object) as anyone but the bot's owner sees it: no
    ``stderr_tail`` in its evidence, its detail by :func:`public_detail`; anything but an object
    is returned as it is.  Never changes ``forfeit`` itself."""
    if not isinstance(forfeit, dict):
        return forfeit
    out = dict(forfeit)
    evidence = out.get("evidence")
    if isinstance(evidence, dict):
        out["evidence"] = {k: v for k, v in evidence.items() if k != "stderr_tail"}
    detail = out.get("detail")
    if isinstance(detail, str):
        out["detail"] = public_detail(str(out.get("reason")), detail)
    return out
