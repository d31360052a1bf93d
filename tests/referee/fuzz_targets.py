"""Fuzz targets (Hypothesis) for the action parser and the referee's answer path.

Every target is a plain function of its drawn inputs that raises (an AssertionError, or whatever
escaped the code under test) when a promise is broken; ``tests/referee/test_fuzz_*.py`` run them
with :func:`examples` (modest by default) and ``benchmarks/fuzz.py`` with 10,000 examples each.

Promises checked:

* the action parser, on any text or object: an :class:`Action` or :class:`InvalidActionError`,
  never another exception; a parsed action's text is the input and parses back to the same action;
  the notation parsers likewise (a value or :class:`NotationError`);
* the referee's answer path, driving the real :class:`Match` through in-memory channels
  (:mod:`arena.referee.fakechannel`) with arbitrary BotMessages, arbitrary bytes through the
  server's own deserializer, arbitrary request ids and arbitrary action text, at arbitrary
  moments: the match always ends, nothing escapes it, the fuzzed seat either plays on or
  forfeits as ``malformed-action`` / ``illegal-action`` with a detail and evidence, its opponent
  is untouched, and the record replays through the engine;
* the same over real gRPC (:class:`GrpcRig`): raw bytes written on a real socket.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import grpc
from hypothesis import HealthCheck, settings
from hypothesis import strategies as st

from arena.engine import COLOURS, LOUNGERS, Action, InvalidActionError, NotationError, parse_action, replay
from arena.engine.actions import ACTIONS_BY_TEXT
from arena.engine.notation import parse_face, parse_lounger, parse_throw, parse_track
from arena.referee import MatchResult, Reason, RefereeServer
from arena.referee.channel import Answer, Request
from arena.referee.fakechannel import GENEROUS, Answerer, FakeChannel, FakeTable, greedy, greedy_text
from arena.referee.server import RefereeConfig, _parser
from arena.v1 import arena_pb2 as pb

from .links import greedy_reply

EXAMPLES_ENV = "ARENA_FUZZ_EXAMPLES"


def examples(default: int) -> int:
    """How many examples a fuzz test runs: ``$ARENA_FUZZ_EXAMPLES`` when set, else ``default``."""
    value = os.environ.get(EXAMPLES_ENV, "")
    return int(value) if value.strip() else default


def fuzz_settings(default: int) -> settings:
    """Explicit settings for a fuzz test (independent of any Hypothesis profile): the number of
    examples, no per-example deadline (the machine is shared), no slowness health checks."""
    return settings(
        max_examples=examples(default),
        deadline=None,
        suppress_health_check=[
            HealthCheck.too_slow,
            HealthCheck.data_too_large,
            HealthCheck.large_base_example,
        ],
    )


# ---------------------------------------------------------------------- text strategies

KNOWN_TEXT = sorted(ACTIONS_BY_TEXT)
WORDS = ["place", "stop", "keep", "chip", "flip", "reclaim", "invade", "conquer", "take-five", "pass"]
PIECES = [
    *WORDS,
    *COLOURS,
    "lifeguard",
    *(lounger.name for lounger in LOUNGERS),
    " ", "  ", ",", "=", "-", "a", "b", "five-", "throw ",
    *"0123456789",
    "10", "99", "100", "01", "1" * 5000, "9" * 50,
    "\uff15", "\u0663", "\u00b2", "\u2155", "\U0001d7d9",  # fullwidth 5, arabic-indic 3, superscript 2, ...
    "\x00", "\n", "\t", "\r", "\u00a0", "\u2028", "\ufeff", "\ud800", "\udfff",
    "GREEN", "Keep", "K",
]  # fmt: skip

ANY_CHAR = st.one_of(
    st.characters(exclude_categories=()),  # every code point but surrogates
    st.characters(categories=["Cs"]),  # lone surrogates
)
ANY_TEXT = st.text(ANY_CHAR, max_size=200)
NOTATION_TEXT = st.lists(st.sampled_from(PIECES), max_size=12).map("".join)


@st.composite
def mutated_action(draw: st.DrawFn) -> str:
    """A canonical action text with a few characters replaced, inserted or deleted."""
    text = list(draw(st.sampled_from(KNOWN_TEXT)))
    for _ in range(draw(st.integers(1, 3))):
        at = draw(st.integers(0, len(text)))
        op = draw(st.sampled_from(["insert", "replace", "delete"]))
        char = draw(st.one_of(ANY_CHAR, st.sampled_from(PIECES)))
        if op == "insert" or at == len(text):
            text.insert(at, char)
        elif op == "replace":
            text[at] = char
        else:
            del text[at]
    return "".join(text)


ACTION_TEXT = st.one_of(ANY_TEXT, NOTATION_TEXT, mutated_action(), st.sampled_from(KNOWN_TEXT))
NOT_TEXT = st.one_of(
    st.none(), st.integers(), st.floats(), st.binary(max_size=20), st.lists(st.integers(), max_size=3),
    st.builds(object), st.dictionaries(st.text(max_size=3), st.integers(), max_size=2),
)  # fmt: skip


# ---------------------------------------------------------------------- (a) the parsers


def check_parse_action(text: object) -> None:
    """``parse_action`` is total, strict and round-trips."""
    try:
        action = parse_action(text)  # type: ignore[arg-type]  # any object at all
    except InvalidActionError:
        return
    assert isinstance(action, Action)
    assert isinstance(text, str)
    assert str(action) == text, (text, str(action))
    assert parse_action(str(action)) == action


def check_notation(text: object) -> None:
    """Every notation parser gives a value or :class:`NotationError` for any input."""
    parsers: list[Callable[[Any], object]] = [parse_face, parse_lounger, parse_throw, parse_track]
    for parse in parsers:
        with contextlib.suppress(NotationError):
            parse(text)


# ---------------------------------------------------------------------- (b) the answer path


@dataclass(frozen=True)
class RawBytes:
    """Bytes from the wire, through the server's own deserializer."""

    data: bytes


@dataclass(frozen=True)
class Reply:
    """An ActionReply; ``relative`` ids are added to the current request's id (clamped at 0)."""

    request_id: int
    relative: bool
    text: str | None  # None: one of the request's legal actions, picked by ``pick``
    pick: int = 0


@dataclass(frozen=True)
class Other:
    """A BotMessage that is not an answer: hello, ready, empty, or unknown fields only."""

    kind: str
    name: str = ""


Item = RawBytes | Reply | Other


@dataclass(frozen=True)
class Plan:
    """What the fuzzed seat does at one request: ``before`` its (greedy) answer, then ``after``."""

    before: tuple[Item, ...]
    after: tuple[Item, ...]


def _varint(n: int) -> bytes:
    out = bytearray()
    while True:
        byte, n = n & 0x7F, n >> 7
        out.append(byte | (0x80 if n else 0))
        if not n:
            return bytes(out)


def _field(number: int, payload: bytes) -> bytes:
    """A length-delimited protobuf field."""
    return _varint(number << 3 | 2) + _varint(len(payload)) + payload


def _text(text: str) -> bytes:
    return text.encode("utf-8", "surrogatepass")  # lone surrogates too: invalid UTF-8 on the wire


def _encode_reply(request_id: int, text: str) -> bytes:
    """A BotMessage{action} encoded by hand (texts may hold lone surrogates protobuf refuses)."""
    return _field(2, b"\x08" + _varint(request_id) + _field(2, _text(text)))


@st.composite
def corrupted_message(draw: st.DrawFn) -> bytes:
    """A well-formed BotMessage's bytes with some bytes flipped, cut or appended."""
    data = bytearray(_encode_reply(draw(st.integers(0, 2**64 - 1)), draw(ACTION_TEXT)))
    for _ in range(draw(st.integers(0, 3))):
        if data:
            data[draw(st.integers(0, len(data) - 1))] = draw(st.integers(0, 255))
    cut = draw(st.integers(0, len(data)))
    return bytes(data[:cut] if draw(st.booleans()) else data) + draw(st.binary(max_size=8))


NEAR = st.integers(-3, 3)  # relative to the current request's id
REQUEST_IDS = st.one_of(
    st.builds(Reply, request_id=NEAR, relative=st.just(True), text=st.none(), pick=st.integers()),
    st.builds(Reply, request_id=NEAR, relative=st.just(True), text=ACTION_TEXT),
    st.builds(Reply, request_id=st.integers(0, 2**64 - 1), relative=st.just(False), text=ACTION_TEXT),
)
ITEMS: st.SearchStrategy[Item] = st.one_of(
    REQUEST_IDS,
    st.builds(RawBytes, st.binary(max_size=300)),
    st.builds(RawBytes, corrupted_message()),
    st.builds(Other, st.sampled_from(["hello", "ready", "empty", "unknown"]), ANY_TEXT),
)
PLANS = st.lists(
    st.builds(Plan, st.lists(ITEMS, max_size=5).map(tuple), st.lists(ITEMS, max_size=3).map(tuple)),
    min_size=1,
    max_size=3,
)

_PARSE = _parser(RefereeConfig().max_message_bytes)


def _message(item: Item, request: Request) -> bytes:
    """The bytes a bot would put on the wire for ``item`` at ``request``."""
    if isinstance(item, RawBytes):
        return item.data
    if isinstance(item, Reply):
        rid = max(0, request.request_id + item.request_id) if item.relative else item.request_id
        if item.text is None:
            text = request.legal_actions[item.pick % len(request.legal_actions)]
        else:
            text = item.text
        return _encode_reply(rid, text)
    if item.kind == "hello":
        return _field(1, _field(1, _text(item.name)) + _field(2, _text(item.name[::-1])))
    if item.kind == "ready":
        return _field(3, b"")
    if item.kind == "unknown":
        return b"\xf8\x07\x01"  # field 127, varint 1: a field this referee does not know
    return b""  # an empty BotMessage


@dataclass
class AnswerOutcome:
    """What the answer-path target observed (for the premature-answer property)."""

    premature: bool = False  # some answer named a request not yet sent when it was delivered
    premature_read: bool = False  # ... and the seat was asked again after it (so it was read)


def _fuzzed_seat(plans: list[Plan], seen: AnswerOutcome) -> Answerer:
    count = 0

    async def answer(table: FakeTable, channel: FakeChannel, request: Request) -> None:
        nonlocal count
        seen.premature_read |= seen.premature
        plan = plans[count] if count < len(plans) else Plan((), ())
        count += 1
        for item in plan.before:
            _deliver(channel, item, request, seen)
        channel.answer(request.request_id, greedy_text(request))
        for item in plan.after:
            _deliver(channel, item, request, seen)

    return answer


def _deliver(channel: FakeChannel, item: Item, request: Request, seen: AnswerOutcome) -> None:
    """Put ``item``'s bytes through the server's own deserializer, then deliver the result."""
    parsed = _PARSE(_message(item, request))
    assert channel.link is not None
    if isinstance(parsed, Answer):
        seen.premature |= parsed.request_id > channel.link.latest_sent
    channel.link.deliver(parsed)


def check_result(result: MatchResult, fuzzed: int) -> None:
    """The promises about a match in which seat ``fuzzed`` sent fuzz: it completed, it replays,
    the opponent is untouched, and the fuzzed seat played on or forfeited for its message."""
    rep = replay(result.replay)  # raises if the record does not replay exactly
    assert rep.result["scores"] == list(result.scores)
    for forfeit in result.forfeits:
        assert forfeit.seat == fuzzed, result.forfeits
        assert forfeit.reason in (Reason.MALFORMED_ACTION, Reason.ILLEGAL_ACTION), forfeit
        assert forfeit.detail, forfeit
        assert "arena bug" not in forfeit.detail, forfeit.detail
        assert "time_used_ms" in forfeit.evidence, forfeit.evidence
    if not result.forfeits:
        assert result.termination in ("normal", "round-cap")


def check_answers(plans: list[Plan], fuzzed: int, seed: int) -> None:
    """Drive a real Match in memory: seat ``fuzzed`` follows ``plans``, the other plays greedy."""
    seen = AnswerOutcome()
    answerers = [greedy, greedy]
    answerers[fuzzed] = _fuzzed_seat(plans, seen)
    result = asyncio.run(FakeTable(seed=seed).play(answerers, timeout=30.0))
    check_result(result, fuzzed)
    if seen.premature_read:  # a premature answer forfeits when it is read, if nothing did before
        assert result.forfeits, "an answer to a request not yet sent was accepted or ignored"


# ---------------------------------------------------------------------- (b') over real gRPC


class GrpcRig:
    """A real RefereeServer on 127.0.0.1 and a channel to it, on one event loop kept across
    examples (a fuzz run plays thousands of matches)."""

    def __init__(self) -> None:
        self.loop = asyncio.new_event_loop()
        asyncio.set_event_loop(self.loop)  # grpc.aio binds to the current loop
        self.server = RefereeServer(RefereeConfig(connect_timeout=10.0))
        self.channel = self.loop.run_until_complete(self._start())

    async def _start(self) -> grpc.aio.Channel:
        return grpc.aio.insecure_channel(await self.server.start("127.0.0.1:0"))

    def close(self) -> None:
        self.loop.run_until_complete(self.channel.close())
        self.loop.run_until_complete(self.server.stop(0.2))
        self.loop.close()
        asyncio.set_event_loop(None)

    def check_raw_bytes(self, blobs: list[bytes], seed: int) -> None:
        """Seat 0 writes ``blobs`` (raw bytes, as they are) at its first request, then plays
        greedy; seat 1 plays greedy.  The promises of :func:`check_result` hold."""
        result = self.loop.run_until_complete(asyncio.wait_for(self._match(blobs, seed), 60))
        check_result(result, 0)

    async def _match(self, blobs: list[bytes], seed: int) -> MatchResult:
        sessions = [self.server.session("fuzzed"), self.server.session("greedy")]
        clients = [
            asyncio.create_task(self._client(sessions[0].token, blobs)),
            asyncio.create_task(self._client(sessions[1].token, [])),
        ]
        try:
            return await self.server.play(sessions, seed, GENEROUS)
        finally:
            await asyncio.gather(*clients, return_exceptions=True)

    async def _client(self, token: str, blobs: list[bytes]) -> None:
        call = self.channel.stream_stream(
            "/arena.v1.Referee/Play",
            request_serializer=lambda raw: raw,
            response_deserializer=pb.RefereeMessage.FromString,
        )(metadata=(("arena-token", token),))
        first = True
        try:
            async for message in call:
                if message.HasField("request"):
                    if first:
                        for blob in blobs:
                            await call.write(blob)
                        first = False
                    await call.write(greedy_reply(message.request).SerializeToString())
        except grpc.aio.AioRpcError:
            pass  # the referee ended the stream after a forfeit: that is its right
        finally:
            call.cancel()


RAW_BLOBS = st.lists(st.one_of(st.binary(max_size=200), corrupted_message()), min_size=1, max_size=4)
