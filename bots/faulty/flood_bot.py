#!/usr/bin/env python3
"""Floods the stream at its FAULT_AT-th decision: before its answer it sends FLOOD (default 1000)
messages that answer nothing (stale answers: the id of its previous request) as fast as it can,
then answers, and floods again after every later request.  The referee must not read an
unbounded number of them: more than 64 messages that answer nothing in one decision (or unread
between two) is flooding."""

import asyncio
import os
import sys

import grpc

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from _common import fault_at
from _raw import answer, channel, greedy, open_stream


async def main():
    flood = int(os.environ.get("FLOOD", "1000"))
    sent = 0
    async with channel() as ch:
        call = open_stream(ch, os.environ["ARENA_TOKEN"])
        count = 0
        previous = None  # the id of the request before this one (answered already: a stale id)
        try:
            async for message in call:
                if message.HasField("request"):
                    count += 1
                    if count >= fault_at() and previous is not None:
                        if count == fault_at():
                            print(
                                f"flood: sending {flood} junk messages per request",
                                file=sys.stderr,
                                flush=True,
                            )
                        junk = answer(message.request, request_id=previous)
                        for _ in range(flood):
                            await call.write(junk)
                            sent += 1
                    await call.write(greedy(message.request))
                    previous = message.request.request_id
        except grpc.aio.AioRpcError as exc:
            print(f"flood: the stream ended under the flood: {exc.code().name}", file=sys.stderr, flush=True)
        print(f"flood: {sent} junk messages sent", file=sys.stderr, flush=True)


asyncio.run(main())
