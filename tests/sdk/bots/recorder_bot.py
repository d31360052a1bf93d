#!/usr/bin/env python3
"""An SDK bot that writes what the SDK hands it, one JSON line per hook call, to $SDK_RECORD.

It plays uniformly at random from ``self.rng`` and, with $SDK_SETUP_SLEEP, sleeps that many
seconds in ``setup``; with $SDK_START_SLEEP, in ``on_match_start``."""

import json
import os
import time

from arena.sdk import ActionEvent, Bot, ThrowEvent, run

OUT = os.environ["SDK_RECORD"]


def write(**line):
    with open(OUT, "a") as fh:
        fh.write(json.dumps(line) + "\n")


def event_json(e):
    if isinstance(e, ThrowEvent):
        return {"throw": list(e.faces), "names": list(e.names), "counts": list(e.counts), "text": str(e)}
    assert isinstance(e, ActionEvent), e
    return {
        "seat": e.seat,
        "action": str(e.action),
        "kind": e.action.kind.name,
        "forced": e.forced,
        "automatic": e.automatic,
        "text": str(e),
    }


class Recorder(Bot):
    name = "recorder"

    def on_match_start(self, welcome):
        time.sleep(float(os.environ.get("SDK_START_SLEEP", "0")))
        write(hook="start", t=time.monotonic())

    def setup(self, welcome):
        time.sleep(float(os.environ.get("SDK_SETUP_SLEEP", "0")))
        write(
            hook="setup",
            seat=self.seat,
            players=self.players,
            match_id=self.match_id,
            seating=list(self.seating),
            bot_seed=self.bot_seed,
            setup_ms=welcome.setup_ms,
            move_time=self.time_control.move_time,
            bank=self.time_control.bank,
            unlimited=self.time_control.unlimited,
            t=time.monotonic(),
        )

    def choose(self, state, legal):
        d = self.decision
        action = self.rng.choice(legal)
        write(
            hook="choose",
            request_id=d.request_id,
            move_time=d.move_time,
            bank=d.bank,
            time_left=d.time_left(),
            legal=[str(a) for a in d.legal],
            same_legal=list(d.legal) == list(legal),
            raw_id=d.request.request_id,
            events=[event_json(e) for e in d.events],
            action=str(action),
            t=time.monotonic(),
        )
        return action

    def on_match_end(self, result):
        write(hook="end", placing=[s.placing for s in result.seats if s.seat == self.seat])


if __name__ == "__main__":
    run(Recorder())
