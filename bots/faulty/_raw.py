"""A minimal raw gRPC client for the faulty bots that need to misbehave below the SDK."""

import os

import grpc

from arena.v1 import arena_pb2 as pb

METHOD = "/arena.v1.Referee/Play"


def open_stream(channel, token):
    """Open a Play stream with ``token``."""
    stub = channel.stream_stream(
        METHOD,
        request_serializer=lambda m: m if isinstance(m, bytes) else m.SerializeToString(),
        response_deserializer=pb.RefereeMessage.FromString,
    )
    return stub(metadata=(("arena-token", token),))


def channel():
    """An aio channel to the referee named in the environment."""
    return grpc.aio.insecure_channel(os.environ["ARENA_ADDRESS"])


def answer(request, text=None, request_id=None):
    """An ActionReply message (default: the first legal action to this request)."""
    return pb.BotMessage(
        action=pb.ActionReply(
            request_id=request.request_id if request_id is None else request_id,
            action=request.legal_actions[0] if text is None else text,
        )
    )


def greedy(request):
    """The greedy policy's ActionReply to ``request`` (games end sooner than with the first
    legal action, which passes every turn and plays to the round cap)."""
    from arena.engine import GreedyPolicy
    from arena.wire import state_from_pb

    action = str(GreedyPolicy().choose(state_from_pb(request.state)))
    return answer(request, text=action if action in request.legal_actions else None)
