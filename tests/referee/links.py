"""What test bots on a real gRPC stream answer (the in-memory seats are
:mod:`arena.referee.fakechannel`)."""

from __future__ import annotations

from arena.engine import GreedyPolicy
from arena.referee.fakechannel import GENEROUS
from arena.v1 import arena_pb2 as pb
from arena.wire import state_from_pb

__all__ = ["GENEROUS", "greedy_reply"]

_GREEDY = GreedyPolicy()


def greedy_reply(request: pb.DecisionRequest) -> pb.BotMessage:
    """The greedy policy's answer to ``request`` (greedy games end quickly)."""
    action = _GREEDY.choose(state_from_pb(request.state))
    return pb.BotMessage(action=pb.ActionReply(request_id=request.request_id, action=str(action)))
