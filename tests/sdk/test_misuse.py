"""A bot author's first mistakes get an error that says what was wrong (README "In Python: the
SDK"): ``choose`` returning something that is neither an Action nor its text, ``run`` given the
class instead of an instance, a bot class without ``choose``.  Each used to reach the referee or
the first hook as something else: "malformed action 'None'", "on_match_start() missing 1
required positional argument", a crash only at the first decision."""

from __future__ import annotations

from collections.abc import Sequence

import pytest

from arena import sdk
from arena.engine import Action, State, legal_actions, new_game
from arena.v1 import arena_pb2 as pb
from arena.wire import state_to_pb


def _request() -> pb.DecisionRequest:
    state = new_game(2)
    return pb.DecisionRequest(
        request_id=1,
        state=state_to_pb(state),
        legal_actions=[str(a) for a in legal_actions(state)],
        move_time_ms=1000,
        bank_ms=10_000,
    )


class _Returns(sdk.Bot):
    def __init__(self, value: object) -> None:
        super().__init__()
        self.value = value

    def choose(self, state: State, legal: Sequence[Action]) -> Action | str:
        if self.value == "first":
            return legal[0]
        if self.value == "first-text":
            return str(legal[0])
        return self.value  # type: ignore[return-value]


@pytest.mark.parametrize(
    ("value", "shown"), [(None, "None (NoneType)"), (0, "0 (int)"), ([1, 2], "[1, 2] (list)")]
)
def test_choose_returning_neither_an_action_nor_text_is_named(value: object, shown: str) -> None:
    with pytest.raises(
        TypeError, match=r"^_Returns\.choose returned (.+): it must return one of the legal"
    ) as err:
        sdk._answer(_Returns(value), _request())
    assert shown in str(err.value)


@pytest.mark.parametrize("value", ["first", "first-text"])
def test_an_action_or_its_text_is_sent(value: str) -> None:
    message = sdk._answer(_Returns(value), _request())
    assert message.action.request_id == 1
    assert message.action.action == str(legal_actions(new_game(2))[0])


def test_a_long_wrong_value_is_cut() -> None:
    with pytest.raises(TypeError) as err:
        sdk._answer(_Returns(list(range(1000))), _request())
    assert len(str(err.value)) < 300


class _NoChoose(sdk.Bot):
    def chose(self, state: State, legal: Sequence[Action]) -> Action:
        return legal[0]


ARGV = ["--address=unix:/nonexistent/referee.sock", "--token=t"]


@pytest.mark.parametrize(
    ("bot", "message"),
    [
        (_Returns, r"run\(\) takes a bot instance: run\(_Returns\(\)\), not the class _Returns"),
        (object(), r"run\(\) takes an instance of a subclass of arena.sdk.Bot, not <object object"),
        (_NoChoose(), r"_NoChoose does not define choose\(self, state, legal\)"),
    ],
)
def test_run_refuses_what_cannot_play_before_connecting(bot: object, message: str) -> None:
    with pytest.raises(TypeError, match=message):
        sdk.run(bot, ARGV)  # type: ignore[arg-type]
    with pytest.raises(TypeError, match=message):
        sdk.play(bot, "unix:/nonexistent/referee.sock", "t")  # type: ignore[arg-type]
