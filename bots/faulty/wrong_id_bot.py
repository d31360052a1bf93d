#!/usr/bin/env python3
"""Answers a request id that was never sent at its FAULT_AT-th decision."""

import asyncio
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from _common import fault_at
from _raw import answer, channel, open_stream


async def main():
    async with channel() as ch:
        call = open_stream(ch, os.environ["ARENA_TOKEN"])
        count = 0
        async for message in call:
            if message.HasField("request"):
                count += 1
                rid = message.request.request_id + (1000 if count == fault_at() else 0)
                await call.write(answer(message.request, request_id=rid))


asyncio.run(main())
