"""What the play page shows: the game as the human seat has seen it, in the replay viewer's terms.

The bridge learns the game from its requests' events (every throw and every seat's action since
its previous request).  :class:`Timeline` applies them with the engine, keeping every state, so
the page draws each one exactly as the replay viewer does (:func:`arena.web.viewdata.state_view`);
:func:`options` says, for each legal action, what it would do and score.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from arena.engine import LOUNGERS, Rules, State, apply, apply_throw, new_game, parse_action, scores
from arena.engine.notation import parse_throw
from arena.web.viewdata import _event_view, state_view


class TimelineError(ValueError):
    """An event that does not follow from the timeline's last state (a bridge out of step)."""


@dataclass
class Timeline:
    """Every state of the game so far and the events between them (record-line dicts)."""

    players: int
    rules: Rules
    states: list[State] = field(default_factory=list)
    events: list[dict[str, Any]] = field(default_factory=list)

    def __post_init__(self) -> None:
        if not self.states:
            self.states.append(new_game(self.players, self.rules))

    @property
    def state(self) -> State:
        """The latest state."""
        return self.states[-1]

    def add_throw(self, text: str) -> None:
        """A throw event (``throw green,red``)."""
        try:
            after = apply_throw(self.state, parse_throw(text))
        except Exception as exc:  # the engine's own errors: the bridge is out of step
            raise TimelineError(f"throw {text!r} does not follow: {exc}") from None
        self.events.append({"throw": text})
        self.states.append(after)

    def add_action(self, seat: int, text: str, *, forced: bool = False, automatic: bool = False) -> None:
        """A seat's action event."""
        if seat != self.state.seat:
            raise TimelineError(f"seat {seat} acted, but seat {self.state.seat} was to act")
        try:
            after = apply(self.state, parse_action(text))
        except Exception as exc:
            raise TimelineError(f"{text!r} of seat {seat} does not follow: {exc}") from None
        event: dict[str, Any] = {"seat": seat, "action": text}
        if forced:
            event["forced"] = True
        if automatic:
            event["auto"] = True
        self.events.append(event)
        self.states.append(after)

    def view(self) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
        """Every state and every event so far, in the replay view's format."""
        states, events = self.view_since(0)
        return [state_view(self.states[0]), *states], events

    def view_since(self, since: int) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
        """The viewer's states after event ``since`` (state k for k > since) and events
        ``since+1 ..`` (1-based, as the viewer counts), in the replay view's format."""
        since = max(0, min(since, len(self.events)))
        states = [state_view(s) for s in self.states[since + 1 :]]
        events = [
            _event_view(k, self.events[k - 1], self.states[k - 1])
            for k in range(since + 1, len(self.events) + 1)
        ]
        return states, events


VERBS = {
    "place": "place a towel (plain side up) on {l}",
    "stop": "stop rolling: the result is what is set aside",
    "keep": "set aside {k} and throw the rest",
    "chip": "spend a chip: throw the last throw again",
    "flip": "flip your towel on {l} to its guest side (secured)",
    "reclaim": "reclaim {l}: the guest figure goes home, your towel is secured",
    "invade": "invade {l}: your guest figure on their towel",
    "conquer": "conquer {l}: your own towel replaces theirs, guest side up",
    "take-five": "take the five-lounger {l} (your towel, guest side up)",
    "pass": "pass: use no lounger",
}


def options(state: State, legal: tuple[str, ...]) -> list[dict[str, Any]]:
    """For each legal action (in the referee's order): its verb, its lounger, what it does and
    what it scores for the seat to act (``gain``: points after minus points now, by R27), with the
    seat's score after it."""
    seat = state.seat
    before = scores(state)[seat]
    out = []
    for text in legal:
        action = parse_action(text)
        verb = text.split(" ")[0]
        lounger = LOUNGERS[action.lounger].name if action.lounger >= 0 else None
        after_state = apply(state, action)
        after = scores(after_state)[seat]
        chips = after_state.chips[seat] - state.chips[seat]
        what = VERBS.get(verb, text).format(l=lounger, k=text.removeprefix("keep "))
        if chips > 0 and verb != "chip":
            what += f" (+{chips} chip{'s' if chips > 1 else ''})"
        out.append(
            {
                "action": text,
                "verb": verb,
                "lounger": lounger,
                "text": what,
                "gain": after - before,
                "score": after,
            }
        )
    return out
