#!/usr/bin/env python3
"""Plays greedily, but at its first decision also opens a second stream with its own token
(already in use by its open stream) and logs what the referee said; it must be refused."""

import asyncio
import os
import sys

import grpc

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from _raw import channel, greedy, open_stream


async def second_stream(ch, token):
    call = open_stream(ch, token)
    try:
        async for message in call:
            kind = message.WhichOneof("message")
            print(f"retoken: second stream: SUCCEEDED got a {kind}", file=sys.stderr, flush=True)
            call.cancel()
            return
        print("retoken: second stream: ended without a message", file=sys.stderr, flush=True)
    except grpc.aio.AioRpcError as exc:
        print(
            f"retoken: second stream: BLOCKED {exc.code().name}: {exc.details()}", file=sys.stderr, flush=True
        )


async def main():
    token = os.environ["ARENA_TOKEN"]
    async with channel() as ch:
        call = open_stream(ch, token)
        tried = False
        async for message in call:
            if message.HasField("request"):
                if not tried:
                    tried = True
                    await second_stream(ch, token)
                await call.write(greedy(message.request))


asyncio.run(main())
