"""Judging one message a bot sent while the referee waits for its decision.

:func:`judge` is a pure function of the message, the request ids and the state, and it is total:
for any :class:`Received` whatever it returns a :class:`Verdict` and never raises (the match still
guards the call, so that a bug here becomes a logged forfeit, never a crashed referee).

Request ids are judged against what had been *sent when the message arrived*: the link stamps
every message with the latest request id it had sent to the seat at that moment
(:attr:`Received.latest_sent`).  An answer that names a request not yet sent when it arrived is
``malformed-action``, even if that request has been sent by the time the match reads the message.
"""

from __future__ import annotations

from dataclasses import dataclass

from arena.engine import (
    Action,
    IllegalActionError,
    InvalidActionError,
    State,
    apply,
    legal_actions,
    parse_action,
)

from .channel import Answer, Hello, Unexpected
from .faults import Reason

TEXT_LIMIT = 200  # characters of a bot's text kept as evidence (hello, last message)


@dataclass(frozen=True)
class Received:
    """A message as it arrived, stamped with the id of the latest request the seat had been
    sent at that moment (0: none yet)."""

    message: Answer | Hello | Unexpected
    latest_sent: int
    was_sent: bool = True  # an Answer: its request id had been sent to this seat when it arrived


@dataclass(frozen=True)
class Accept:
    """The answer to the current request: a legal action."""

    action: Action


@dataclass(frozen=True)
class Noise:
    """A message that answers nothing (a Hello, an answer to an older request); it counts towards
    the flood limit.  ``hello`` is the bot's self-description when the message was a Hello."""

    hello: str | None = None


@dataclass(frozen=True)
class Reject:
    """A message that forfeits the seat."""

    reason: Reason
    detail: str


Verdict = Accept | Noise | Reject


def last_message(message: Answer | Hello | Unexpected) -> str | None:
    """The evidence a message leaves as the seat's ``last_message`` (its action text, cut to
    :data:`TEXT_LIMIT`), or None for a message without an action."""
    if not isinstance(message, Answer):
        return None
    return message.text[:TEXT_LIMIT]


def judge(received: Received, request_id: int, state: State) -> Verdict:
    """The verdict on ``received`` while the seat's current request is ``request_id`` in ``state``.

    * a Hello, or an answer to an older request that had been sent: :class:`Noise`;
    * an answer naming a request that had not been sent to the seat when it arrived (a future or
      made-up id, 0, or an id the match sent to another seat): ``malformed-action``;
    * an answer to ``request_id``: text that is not an action is ``malformed-action``, an action
      the rules forbid now is ``illegal-action``, a legal one is :class:`Accept`;
    * a message without a known member (empty, or only fields this referee does not know):
      ``malformed-action``.
    """
    reply = received.message
    if isinstance(reply, Hello):
        return Noise(hello=f"{reply.name} {reply.version}".strip()[:TEXT_LIMIT])
    if not isinstance(reply, Answer):
        kind = reply.kind
        what = "an empty message" if kind is None else f"a {kind} message where an answer was due"
        return Reject(Reason.MALFORMED_ACTION, f"sent {what}")
    if reply.request_id > received.latest_sent:
        return Reject(
            Reason.MALFORMED_ACTION,
            f"answered request {reply.request_id}, which was never sent to this seat before the answer "
            f"arrived (the latest request it had been sent then: {received.latest_sent or 'none'})",
        )
    if not received.was_sent:  # 0, or an id the match sent to another seat
        return Reject(
            Reason.MALFORMED_ACTION,
            f"answered request {reply.request_id}, which was never sent to this seat (the latest "
            f"request it had been sent then: {received.latest_sent or 'none'})",
        )
    if reply.request_id < request_id:
        return Noise()  # a stale answer to an older request it was sent: dropped
    try:
        action = parse_action(reply.text)
        if action not in legal_actions(state):  # (the state keeps its legal actions: a cheap test)
            apply(state, action)  # raises with the rules' reason
    except InvalidActionError as exc:
        return Reject(Reason.MALFORMED_ACTION, str(exc))
    except IllegalActionError as exc:
        return Reject(Reason.ILLEGAL_ACTION, str(exc))
    return Accept(action)
