#!/usr/bin/env python3
"""The trivial SDK bot (first legal action) that also notes, per request, when the SDK handed it
the request and when its answer was built (``time.monotonic``, one clock for every process on
the host), and writes them as JSON to ``$ARENA_TRACE_OUT.<pid>`` at exit: the bot's side of
``benchmarks/referee.py``'s timeline (e)."""

import atexit
import json
import os
import time

from arena import sdk

NOTES: list[tuple[str, int, float, float]] = []  # (match id, request id, in, out)
_answer = sdk._answer


def _timed_answer(bot, request, *rest):
    t = time.monotonic()
    message = _answer(bot, request, *rest)
    NOTES.append((bot.match_id, request.request_id, t, time.monotonic()))
    return message


sdk._answer = _timed_answer


class FirstLegal(sdk.Bot):
    name = "first-legal"

    def choose(self, state, legal):
        return legal[0]


@atexit.register
def _dump() -> None:
    with open(f"{os.environ['ARENA_TRACE_OUT']}.{os.getpid()}", "w") as f:
        json.dump(NOTES, f)


if __name__ == "__main__":
    raise SystemExit(sdk.run(FirstLegal()))
