#!/usr/bin/env python3
"""At its FAULT_AT-th decision closes its stream without answering and at once opens a new one
with the same token, hoping to get its seat back.  Logs every message the new stream gets."""

import asyncio
import os
import sys

import grpc

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from _common import fault_at
from _raw import channel, greedy, open_stream


def log(text):
    print(f"reopen: {text}", file=sys.stderr, flush=True)


async def main():
    token = os.environ["ARENA_TOKEN"]
    async with channel() as ch:
        call = open_stream(ch, token)
        count = 0
        async for message in call:
            if message.HasField("request"):
                count += 1
                if count == fault_at():
                    await call.done_writing()
                    call.cancel()
                    break
                await call.write(greedy(message.request))
        log("closed the first stream; reopening with the same token")
        again = open_stream(ch, token)
        try:
            async for message in again:
                kind = message.WhichOneof("message")
                detail = message.goodbye.reason if kind == "goodbye" else ""
                log(f"second stream got a {kind} {detail}".rstrip())
            log("second stream ended")
        except grpc.aio.AioRpcError as exc:
            log(f"second stream refused: {exc.code().name}: {exc.details()}")


asyncio.run(main())
