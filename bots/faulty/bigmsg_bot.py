#!/usr/bin/env python3
"""At its FAULT_AT-th decision answers with one 100 MB message: a well-formed BotMessage whose
action text is 100 MB of zero bytes (far over the referee's 64 KiB receive limit).  Logs on
stderr what the write and the stream said."""

import asyncio
import os
import sys

import grpc

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from _common import fault_at
from _raw import channel, greedy, open_stream

SIZE = 100_000_000


def varint(n):
    out = bytearray()
    while True:
        byte, n = n & 0x7F, n >> 7
        out.append(byte | (0x80 if n else 0))
        if not n:
            return bytes(out)


def huge_answer(request_id):
    """The encoded BotMessage{action{request_id, action: <SIZE zero bytes>}}, built without
    intermediate copies (the sandbox's memory limit applies to the bot too)."""
    rid = b"\x08" + varint(request_id)  # ActionReply.request_id = 1 (varint)
    text_head = b"\x12" + varint(SIZE)  # ActionReply.action = 2 (string)
    reply_len = len(rid) + len(text_head) + SIZE
    head = b"\x12" + varint(reply_len) + rid + text_head  # BotMessage.action = 2
    return b"".join((head, bytes(SIZE)))


async def main():
    async with channel() as ch:
        call = open_stream(ch, os.environ["ARENA_TOKEN"])
        count = 0
        try:
            async for message in call:
                if message.HasField("request"):
                    count += 1
                    if count == fault_at():
                        blob = huge_answer(message.request.request_id)
                        print(f"bigmsg: sending {len(blob)} bytes", file=sys.stderr, flush=True)
                        await call.write(blob)
                        del blob
                        print("bigmsg: the write returned", file=sys.stderr, flush=True)
                    else:
                        await call.write(greedy(message.request))
        except grpc.aio.AioRpcError as exc:
            print(f"bigmsg: stream ended: {exc.code().name}: {exc.details()}", file=sys.stderr, flush=True)
        else:
            print(f"bigmsg: stream ended: {(await call.code()).name}", file=sys.stderr, flush=True)


asyncio.run(main())
