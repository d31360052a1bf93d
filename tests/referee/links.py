"""Driving a real :class:`~arena.referee.match.Match` through its SeatLinks, without gRPC.

The match is the real one (clocks, deadlines, forfeits, the record); the test stands where the
server's stream handler stands: it reads each seat's outbox and feeds the seat's inbox with
:meth:`SeatLink.deliver`, exactly as the pump task does for a real stream.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Sequence

from arena.engine import GreedyPolicy
from arena.referee import MatchResult, TimeControl
from arena.referee.match import Match, SeatLink
from arena.v1 import arena_pb2 as pb
from arena.wire import state_from_pb

GENEROUS = TimeControl(move_time=30.0, bank=30.0)  # in-process seats are never slow
_GREEDY = GreedyPolicy()

# answer(link, request) -> called for every request the seat receives; delivers what it likes
Answerer = Callable[[SeatLink, pb.DecisionRequest], Awaitable[None]]


def greedy_reply(request: pb.DecisionRequest) -> pb.BotMessage:
    """The greedy policy's answer to ``request`` (greedy games end quickly)."""
    action = _GREEDY.choose(state_from_pb(request.state))
    return pb.BotMessage(action=pb.ActionReply(request_id=request.request_id, action=str(action)))


async def greedy(link: SeatLink, request: pb.DecisionRequest) -> None:
    """An answerer that plays greedy."""
    link.deliver(greedy_reply(request))


async def _seat(link: SeatLink, answer: Answerer, received: list[pb.RefereeMessage]) -> None:
    while True:
        message = await link.outbox.get()
        if message is None:
            return
        received.append(message)
        if message.HasField("request"):
            await answer(link, message.request)


async def play(
    answerers: Sequence[Answerer],
    *,
    seed: int = 1,
    control: TimeControl = GENEROUS,
    grace: float = 0.0,
    timeout: float = 60.0,
    match: Match | None = None,
) -> tuple[MatchResult, list[list[pb.RefereeMessage]]]:
    """Play a match whose seat k is driven by ``answerers[k]``; return the result and every
    message each seat received.  Fails if the match takes longer than ``timeout`` seconds."""
    match = match or Match([f"seat{k}" for k in range(len(answerers))], seed, control, connect_timeout=5.0)
    received: list[list[pb.RefereeMessage]] = [[] for _ in answerers]
    seats = [
        asyncio.create_task(_seat(match.attach(k, grace=grace), answer, received[k]))
        for k, answer in enumerate(answerers)
    ]
    try:
        result = await asyncio.wait_for(match.run(), timeout)
    finally:
        for task in seats:
            task.cancel()
        await asyncio.gather(*seats, return_exceptions=True)
    return result, received
