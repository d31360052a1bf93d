#!/usr/bin/env python3
"""At its FAULT_AT-th decision sends bytes that do not decode as a BotMessage: a length-delimited
field whose length runs past the end of the message."""

import asyncio
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from _common import fault_at
from _raw import channel, greedy, open_stream

BAD = b"\x12\x7f\x08\x01\x12\x04stop"  # BotMessage.action claims 127 bytes, 8 follow


async def main():
    async with channel() as ch:
        call = open_stream(ch, os.environ["ARENA_TOKEN"])
        count = 0
        async for message in call:
            if message.HasField("request"):
                count += 1
                if count == fault_at():
                    print(f"badbytes: sending {BAD!r}", file=sys.stderr, flush=True)
                    await call.write(BAD)
                else:
                    await call.write(greedy(message.request))


asyncio.run(main())
