#!/usr/bin/env python3
"""Plays fairly on its own token, but once the match runs it also tries to open streams with
another seat's token (ARENA_PEER_TOKEN) and with a made-up token, and logs what the referee said."""

import asyncio
import os
import sys

import grpc

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from _raw import answer, channel, open_stream


async def intrude(ch, token, label):
    call = open_stream(ch, token)
    try:
        async for _ in call:
            print(f"impostor: {label}: got a message!", file=sys.stderr, flush=True)
            return
    except grpc.aio.AioRpcError as exc:
        print(f"impostor: {label}: {exc.code().name}", file=sys.stderr, flush=True)


async def main():
    async with channel() as ch:
        call = open_stream(ch, os.environ["ARENA_TOKEN"])
        tried = False
        async for message in call:
            if message.HasField("request"):
                if not tried:
                    tried = True
                    await intrude(ch, os.environ.get("ARENA_PEER_TOKEN", "x"), "peer-token")
                    await intrude(ch, "made-up-token", "made-up-token")
                await call.write(answer(message.request))


asyncio.run(main())
