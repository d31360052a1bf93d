#!/usr/bin/env python3
"""Before every answer, repeats its previous answer (an old request id): those must be dropped."""

import asyncio
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from _raw import answer, channel, open_stream


async def main():
    async with channel() as ch:
        call = open_stream(ch, os.environ["ARENA_TOKEN"])
        previous = None
        async for message in call:
            if message.HasField("request"):
                if previous is not None:
                    await call.write(previous)  # stale: answers an older request again
                previous = answer(message.request)
                await call.write(previous)


asyncio.run(main())
