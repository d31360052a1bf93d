"""Fuzz the action parser and the referee's answer path (Hypothesis), 10,000 examples per target.

Usage: .venv/bin/python benchmarks/fuzz.py [--examples N] [--quick] [--target NAME ...]

Targets (defined in tests/referee/fuzz_targets.py and storm_targets.py, where the CI tests run them with fewer
examples):

  parser     parse_action on arbitrary text, notation-built text and mutated actions: an Action
             (whose text round-trips) or InvalidActionError, nothing else
  notation   the notation parsers on arbitrary text and non-text: a value or NotationError
  answers    the real Match, driven in memory through the fake channel: arbitrary BotMessages, bytes
             through the server's deserializer, request ids and action text, at arbitrary moments
  grpc       the same over real gRPC: raw bytes written by a client on a real TCP socket
  reconnect  the real Match in memory, one seat dropping, coming back (at once, late, never),
             flapping hundreds of times, ending its stream or sending noise, at its own requests
             and during its opponent's (tests/referee/storm_targets.py)

Prints, per target, the examples run, the failures (with the falsifying example) and the time;
exits 1 if any target failed.  ``--quick``: 200 examples per target.
"""

from __future__ import annotations

import argparse
import sys
import time
import traceback
from collections.abc import Callable
from pathlib import Path
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests"))

from referee.fuzz_targets import (  # noqa: E402  (the targets live with the tests)
    ACTION_TEXT,
    NOT_TEXT,
    PLANS,
    RAW_BLOBS,
    GrpcRig,
    check_answers,
    check_notation,
    check_parse_action,
)
from referee.storm_targets import STORM_PLANS, check_storm  # noqa: E402

TARGETS = ("parser", "notation", "answers", "grpc", "reconnect")


def _run(name: str, examples: int, strategy: Any, check: Callable[..., None]) -> tuple[int, int, float]:
    """Run ``check`` on ``examples`` examples of ``strategy``; (examples run, failures, seconds)."""
    count = 0

    def counted(args: tuple[Any, ...]) -> None:
        nonlocal count
        count += 1
        check(*args)

    test = settings(
        max_examples=examples,
        deadline=None,
        database=None,
        suppress_health_check=list(HealthCheck),
    )(given(strategy)(counted))
    start = time.monotonic()
    failures = 0
    try:
        test()
    except Exception:  # Hypothesis re-raises the (shrunk) failure: report it, go on
        failures = 1
        print(f"--- {name}: FAILED", file=sys.stderr)
        traceback.print_exc()
    return count, failures, time.monotonic() - start


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--examples", type=int, default=10_000, help="examples per target (default 10,000)")
    parser.add_argument("--quick", action="store_true", help="200 examples per target")
    parser.add_argument("--target", action="append", choices=TARGETS, help="only these targets")
    args = parser.parse_args()
    examples = 200 if args.quick else args.examples
    chosen = args.target or list(TARGETS)

    print(f"{'target':<10} {'examples':>9} {'failures':>9} {'seconds':>9} {'ms/example':>11}")
    failed = 0
    for name in chosen:
        if name == "parser":
            row = _run(name, examples, st.tuples(ACTION_TEXT), check_parse_action)
        elif name == "notation":
            row = _run(name, examples, st.tuples(st.one_of(ACTION_TEXT, NOT_TEXT)), check_notation)
        elif name == "answers":
            plans = st.tuples(PLANS, st.integers(0, 1), st.integers(0, 2**20))
            row = _run(name, examples, plans, check_answers)
        elif name == "reconnect":
            storms = st.tuples(STORM_PLANS, STORM_PLANS, st.integers(0, 2**20))
            row = _run(name, examples, storms, check_storm)
        else:
            rig = GrpcRig()
            try:
                blobs = st.tuples(RAW_BLOBS, st.integers(0, 2**20))
                row = _run(name, examples, blobs, rig.check_raw_bytes)
            finally:
                rig.close()
        count, failures, seconds = row
        failed += failures
        per = 1000 * seconds / max(1, count)
        print(f"{name:<10} {count:>9,} {failures:>9} {seconds:>9.1f} {per:>11.2f}", flush=True)
    return 1 if failed else 0


if __name__ == "__main__":
    raise SystemExit(main())
