"""The seam between a match and its seats: what a seat is sent, what it can send, and the
process hooks.  Nothing here knows the wire.

A match talks to each seat through a :class:`SeatChannel` (the seat's transport) in one
direction, and the transport feeds the match's end of the seat (a
:class:`~arena.referee.seatlink.SeatLink`, via ``deliver``) with :data:`Inbound` items in the
other.  Everything that crosses is a plain Python value:

* to the seat (:data:`Outgoing`): a :class:`Welcome`, a :class:`Request`, a :class:`Result`, a
  :class:`Goodbye`; then ``finish()`` ends the seat's stream;
* from the seat (:data:`Inbound`): an :class:`Answer`, a :class:`Hello`, a :class:`Ready`, an
  :class:`Unexpected` message, :class:`Garbage` (bytes that are not a message), or the end of the
  stream: :class:`Closed` (for good) or :class:`Away` (a seat that may reconnect dropped).

Implementations: gRPC (:mod:`arena.referee.grpc_channel`, used by the referee server) and an
in-memory one (:mod:`arena.referee.fakechannel`) for tests and in-process seats.  A new kind of
seat (a human in a browser, an environment for a learning agent) implements ``send``/``finish``,
converts what its seat does into :data:`Inbound` items, and attaches with :meth:`Match.attach`.

The process hooks (:data:`Probe`, :data:`EvidenceFn`, :data:`CpuFn`, :data:`Settle`, and
:meth:`Match.seat_process_exited`) are how whoever runs a seat's process tells the match about it;
a seat without a process simply has none.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol

from .faults import Reason

if TYPE_CHECKING:
    from arena.engine import State

    from .timecontrol import TimeControl


# ---------------------------------------------------------------------- to the seat


@dataclass(frozen=True)
class Welcome:
    """The first message of a seat's stream (again after a reconnection)."""

    match_id: str
    seat: int
    players: int
    rules_version: str
    time_control: TimeControl
    seating: tuple[str, ...]
    bot_seed: int
    setup_ms: int


@dataclass(frozen=True)
class ThrowEvent:
    """The dice were thrown (``text``: the throw in notation)."""

    throw: str


@dataclass(frozen=True)
class ActionEvent:
    """A seat acted; ``forced`` when it was the only legal action, ``automatic`` when the referee
    chose it for a forfeited seat."""

    seat: int
    action: str
    forced: bool = False
    automatic: bool = False


Event = ThrowEvent | ActionEvent


@dataclass(frozen=True)
class Request:
    """A decision asked of the seat: answer ``request_id`` with one of ``legal_actions``.
    ``move_time_ms``/``bank_ms`` are 0 without a clock; ``events`` happened since its last request."""

    request_id: int
    state: State
    legal_actions: tuple[str, ...]
    move_time_ms: int
    bank_ms: int
    events: tuple[Event, ...] = ()


@dataclass(frozen=True)
class SeatLine:
    """One seat's line of a :class:`Result`."""

    seat: int
    score: int
    placing: int
    termination: str
    detail: str = ""


@dataclass(frozen=True)
class Result:
    """The result as a seat is told it: its own line when it forfeited, every line at the end."""

    match_id: str
    seats: tuple[SeatLine, ...]


@dataclass(frozen=True)
class Goodbye:
    """No further matches on this stream."""

    reason: str


Outgoing = Welcome | Request | Result | Goodbye


class SeatChannel(Protocol):
    """One seat's transport as the match sees it.  Neither method blocks or raises: a message to
    a seat that has gone is dropped (its going arrives as :class:`Closed` or :class:`Away`)."""

    def send(self, message: Outgoing) -> None:
        """Queue ``message`` for the seat, in order."""

    def finish(self) -> None:
        """No more messages: end the seat's stream once the queued ones are out."""


# ---------------------------------------------------------------------- from the seat


@dataclass(frozen=True)
class Answer:
    """The seat's answer to request ``request_id``: ``text`` should be a legal action."""

    request_id: int
    text: str


@dataclass(frozen=True)
class Hello:
    """The seat describes itself (optional, answers nothing)."""

    name: str = ""
    version: str = ""


@dataclass(frozen=True)
class Ready:
    """The seat has finished its set-up (promised at connection; sent after the Welcome)."""


@dataclass(frozen=True)
class Unexpected:
    """A well-formed message that is none of the above: ``kind`` names it, None when empty (no
    known member at all)."""

    kind: str | None = None


@dataclass(frozen=True)
class Garbage:
    """Bytes that are not a message: their ``size`` and why they could not be read."""

    size: int
    error: str


@dataclass(frozen=True)
class Closed:
    """The seat's stream ended for good.  ``reason`` is a Reason, ``detail`` says how."""

    reason: Reason
    detail: str


@dataclass(frozen=True)
class Away:
    """The stream of a seat that may reconnect dropped (produced by the seat's link from a
    ``disconnected`` :class:`Closed` when the seat has a grace; transports send :class:`Closed`)."""

    detail: str


Message = Answer | Hello | Ready | Unexpected  # what a seat can say
Inbound = Message | Garbage | Closed | Away  # what a transport delivers to the match


# ---------------------------------------------------------------------- the process hooks

# probe(seat) -> (Reason, detail) when the seat's process is known to be dead or frozen
Probe = Callable[[int], tuple[Reason, str] | None]
# evidence(seat) -> extra evidence (e.g. the stderr tail) for a forfeit
EvidenceFn = Callable[[int], dict[str, Any]]
# cpu_time(seat) -> CPU seconds used so far by the seat's bot (process tree), or None
CpuFn = Callable[[int], float | None]
# settle(seat) -> after a seat's stream ended: returns (within a bounded time) once its process
# has exited if it was about to, and its last output has been collected, so that the forfeit's
# reason and evidence hold how it ended and what it wrote just before
Settle = Callable[[int], Awaitable[None]]
