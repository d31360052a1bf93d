"""A remote bot that drops its stream mid-decision and comes back within the grace gets the
unanswered request again: with the time that is left *now* (proto/README.md section 7: "the bank
in it is what is left now"), not the figures of when it was first sent.

The bot here (a gRPC client over a real TCP socket, against a random bot in its own process)
thinks 1.5 s on a 1 s + 5 s clock, drops, reconnects at once and reads the request again.  It
used to say 1000 ms of move time and the whole 5000 ms bank, while 1.5 s of the 6 s were gone: a
bot that planned its time from it (as the SDK's ``time_left`` does) overran by what it had
thought before the drop.
"""

from __future__ import annotations

import asyncio
import queue
import threading
import time
from collections.abc import Iterator

import grpc

from arena.hosting import LocalSeat, MatchHost
from arena.matchrunner import resolve_bot
from arena.referee import MatchResult, RefereeConfig, TimeControl
from arena.v1 import arena_pb2 as pb

THINK = 1.5  # seconds thought before the drop, on a 1 s + 5 s clock


def requests(outbox: queue.Queue[pb.BotMessage | None]) -> Iterator[pb.BotMessage]:
    """The bot's side of one stream: what is put on ``outbox``, until a None."""
    while (item := outbox.get()) is not None:
        yield item


def dropping_bot(port: int, token: str, seen: list[tuple[int, int, int]]) -> None:
    """Answer at once, except at the 3rd request: think THINK s, drop, reconnect, answer.  Every
    request's (id, move_time_ms, bank_ms) goes to ``seen``."""
    dropped = False
    over = False
    while not over:
        outbox: queue.Queue[pb.BotMessage | None] = queue.Queue()
        with grpc.insecure_channel(f"127.0.0.1:{port}") as channel:
            play = channel.stream_stream(
                "/arena.v1.Referee/Play",
                request_serializer=pb.BotMessage.SerializeToString,
                response_deserializer=pb.RefereeMessage.FromString,
            )
            call = play(requests(outbox), metadata=[("arena-token", token)])
            over = True  # unless it drops
            try:
                for message in call:
                    if message.WhichOneof("message") != "request":
                        continue
                    r = message.request
                    seen.append((r.request_id, r.move_time_ms, r.bank_ms))
                    if len(seen) == 3 and not dropped:
                        time.sleep(THINK)
                        dropped, over = True, False
                        call.cancel()
                        break
                    outbox.put(
                        pb.BotMessage(
                            action=pb.ActionReply(request_id=r.request_id, action=r.legal_actions[0])
                        )
                    )
            except grpc.RpcError:
                pass
            finally:
                outbox.put(None)


def test_a_request_sent_again_after_a_drop_tells_the_time_left_now() -> None:
    seen: list[tuple[int, int, int]] = []

    async def run() -> MatchResult:
        host = MatchHost(sandbox=None, config=RefereeConfig())
        await host.start(listen="127.0.0.1:0")
        try:
            port = int(host.server.listen_address.rsplit(":", 1)[1])
            session = host.server.session("dropper")
            session.grace = 10.0
            bot = threading.Thread(target=dropping_bot, args=(port, session.token, seen), daemon=True)
            bot.start()
            result = await host.play([session, LocalSeat(resolve_bot("random"))], 3, TimeControl(1.0, 5.0))
            await asyncio.to_thread(bot.join, 10)
        finally:
            await host.close()
        return result

    result = asyncio.run(run())
    assert result.forfeits == (), result.forfeits
    first, again = seen[2], seen[3]
    assert first == (first[0], 1000, 5000)
    assert again[0] == first[0]  # the same request, sent again after the reattach
    # 1.5 s thought: the move time is used up and about 0.5 s of the bank with it
    assert again[1] == 0, seen[:6]
    assert 3000 <= again[2] <= 4600, seen[:6]
    assert seen[4][2] <= again[2]  # the next request's bank is no more than that
