#!/usr/bin/env python3
"""A raw-gRPC bot that sends no Hello (it is optional) and, kept running, opens the stream of its
next match as soon as it reads a result, without waiting for the old stream to end. Refused a
stream, it exits with status 5."""

import asyncio
import os
import sys

import grpc

from arena.v1 import arena_pb2 as pb

METHOD = "/arena.v1.Referee/Play"


async def main() -> int:
    async with grpc.aio.insecure_channel(os.environ["ARENA_ADDRESS"]) as channel:
        stub = channel.stream_stream(
            METHOD,
            request_serializer=pb.BotMessage.SerializeToString,
            response_deserializer=pb.RefereeMessage.FromString,
        )
        old = []  # calls left open on purpose
        while True:
            call = stub(metadata=(("arena-token", os.environ["ARENA_TOKEN"]),))
            old.append(call)
            try:
                while True:
                    message = await call.read()
                    if message is grpc.aio.EOF:
                        break
                    kind = message.WhichOneof("message")
                    if kind == "request":
                        r = message.request
                        reply = pb.ActionReply(request_id=r.request_id, action=r.legal_actions[0])
                        await call.write(pb.BotMessage(action=reply))
                    elif kind == "result":
                        break  # on to the next match at once
                    elif kind == "goodbye":
                        return 0
            except grpc.aio.AioRpcError as exc:
                print(f"eager_bot: refused: {exc.code().name}: {exc.details()}", file=sys.stderr)
                return 5


if __name__ == "__main__":
    sys.exit(asyncio.run(main()))
