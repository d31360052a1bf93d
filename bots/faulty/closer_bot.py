#!/usr/bin/env python3
"""Closes its stream at its FAULT_AT-th decision but keeps its process running."""

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
                if count == fault_at():
                    await call.done_writing()
                    call.cancel()
                    break
                await call.write(answer(message.request))
    await asyncio.sleep(60)  # still alive; the referee must not wait for us


asyncio.run(main())
