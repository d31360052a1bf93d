"""Analysis of a played game: what every decision was worth, and what it cost.

:func:`analyse` replays a game record (:class:`arena.engine.record.Replay`) and, at every real
decision (more than one legal action, not made by the referee for a seat that forfeited), asks a
**decision evaluator** -- ``(state) -> {action: value}``, the deciding seat's expected final
margin in points after each legal action -- for the value of the action taken and of the best
one.  The **loss** of a decision is ``best - chosen`` (>= 0; 0 when the chosen action is a best
one).  Per seat, the losses add up to the expected points that seat gave away over the game.

Evaluators (:data:`EVALUATORS`, ``arena replays analyse --evaluator``):

* ``value`` (the default): :class:`arena.strength.value_search.ValueDecisions` over the shipped
  learned evaluation (:func:`arena.strength.value.load_default`): exact expectimax over the rest
  of the turn, the learned value of the state after it (exact at the end of the game).  One unit
  for every decision, setup included;
* ``search``: the search bot's own :func:`arena.strength.decisions.decision_values` (its
  future-aware worths; in the game's last turn a pairwise result scaled to points).  Its setup
  values are a preference, not points, so setup decisions are not analysed with it.

Nothing is stored: an analysis is a pure function of the record and the weights, so it is
recomputed on demand (the web app keeps recent ones in memory, keyed by the replay's sha256 and
the evaluator, so new weights never show a stale analysis).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from typing import Any, Final

from arena.engine import Action, legal_actions, parse_action
from arena.engine.record import Replay

DecisionValues = Callable[[Any], dict[Action, float]]  # (State) -> {action: value}
COSTLY_PER_SEAT: Final = 3  # the costliest decisions marked per seat
COSTLY_MIN: Final = 0.05  # ... when they cost at least this many points


@dataclass(frozen=True)
class Decision:
    """One analysed decision.  ``step`` is the event's number (1-based, as the viewer counts:
    the viewer's step ``step`` shows this decision taken)."""

    step: int
    seat: int
    turn: int
    round: int
    phase: str
    options: int  # legal actions
    chosen: str
    chosen_value: float
    best: str
    best_value: float
    loss: float
    costly: bool = False  # among its seat's costliest decisions


@dataclass(frozen=True)
class SeatSummary:
    """One seat's analysis: its decisions and the expected points it lost."""

    seat: int
    name: str
    decisions: int
    total_loss: float
    mean_loss: float
    costliest: list[int]  # steps, costliest first
    score: int | None


@dataclass(frozen=True)
class Analysis:
    """A whole game's analysis (see the module docstring)."""

    evaluator: str
    players: int
    steps: int  # events in the record
    seats: list[SeatSummary]
    decisions: list[Decision]
    match: int | None = None
    notes: list[str] = field(default_factory=list)

    def cumulative(self, seat: int) -> list[tuple[int, float]]:
        """``(step, expected points lost so far)`` after each of ``seat``'s decisions."""
        total = 0.0
        out = []
        for d in self.decisions:
            if d.seat == seat:
                total += d.loss
                out.append((d.step, total))
        return out

    def to_json(self) -> dict[str, Any]:
        """Plain JSON data (``--json``, the web app's ``/matches/{id}/analysis``)."""
        return {
            "match": self.match,
            "evaluator": self.evaluator,
            "players": self.players,
            "steps": self.steps,
            "unit": "expected points of final margin (score minus the mean of the others)",
            "seats": [
                {**asdict(s), "curve": [[k, round(v, 4)] for k, v in self.cumulative(s.seat)]}
                for s in self.seats
            ],
            "decisions": [asdict(d) for d in self.decisions],
            "notes": self.notes,
        }


EVALUATORS: Final = ("value", "search")


class UnknownEvaluatorError(ValueError):
    """An evaluator name that is not one of :data:`EVALUATORS`."""


def evaluator_by_name(name: str = "value") -> tuple[DecisionValues, str, frozenset[str]]:
    """An evaluator (module docstring), its description, and the phases it cannot value in points."""
    if name == "value":
        from .value import load_default
        from .value_search import ValueDecisions

        vf = load_default()
        return ValueDecisions(vf), f"the learned value {vf.name} + exact turn expectimax", frozenset()
    if name == "search":
        from .decisions import decision_values

        return (
            decision_values,
            "the search bot's decision values (arena.strength.decisions)",
            frozenset({"setup"}),
        )
    raise UnknownEvaluatorError(f"unknown evaluator {name!r} (choose from {', '.join(EVALUATORS)})")


def default_evaluator() -> tuple[DecisionValues, str]:
    """The analysis's default evaluator and its name: the learned evaluation with the turn expectimax."""
    decide, label, _skip = evaluator_by_name("value")
    return decide, label


def analyse(
    rep: Replay,
    evaluator: DecisionValues | None = None,
    name: str = "",
    *,
    match: int | None = None,
    seating: list[str] | None = None,
    skip_phases: frozenset[str] = frozenset(),
) -> Analysis:
    """Analyse every real decision of ``rep`` (module docstring) with ``evaluator`` (default:
    :func:`default_evaluator`); decisions in ``skip_phases`` (phase labels) are left out."""
    if evaluator is None:
        evaluator, name = default_evaluator()
    players = rep.states[0].players
    names = seating or [f"seat {k}" for k in range(players)]
    raw: list[Decision] = []
    skipped_auto = 0
    for k, event in enumerate(rep.events):
        if "action" not in event:
            continue
        state = rep.states[k]
        legal = legal_actions(state)
        if len(legal) < 2:
            continue
        if event.get("auto"):
            skipped_auto += 1
            continue
        if state.phase.label in skip_phases:
            continue
        chosen = parse_action(str(event["action"]))
        values = evaluator(state)
        chosen_value = values[chosen]
        best = max(legal, key=lambda a: values[a])
        best_value = values[best]
        if best_value <= chosen_value:  # the chosen action is a best one
            best, best_value = chosen, chosen_value
        raw.append(
            Decision(
                step=k + 1,
                seat=state.seat,
                turn=state.turn,
                round=state.round,
                phase=state.phase.label,
                options=len(legal),
                chosen=str(chosen),
                chosen_value=round(chosen_value, 4),
                best=str(best),
                best_value=round(best_value, 4),
                loss=round(max(0.0, best_value - chosen_value), 4),
            )
        )
    costly: set[int] = set()
    seats = []
    scores = rep.result.get("scores")
    for seat in range(players):
        mine = [d for d in raw if d.seat == seat]
        top = sorted((d for d in mine if d.loss >= COSTLY_MIN), key=lambda d: (-d.loss, d.step))
        marked = [d.step for d in top[:COSTLY_PER_SEAT]]
        costly.update(marked)
        total = sum(d.loss for d in mine)
        seats.append(
            SeatSummary(
                seat=seat,
                name=names[seat],
                decisions=len(mine),
                total_loss=round(total, 4),
                mean_loss=round(total / len(mine), 4) if mine else 0.0,
                costliest=marked,
                score=int(scores[seat]) if isinstance(scores, list) and seat < len(scores) else None,
            )
        )
    decisions = [Decision(**{**asdict(d), "costly": d.step in costly}) for d in raw]
    notes = []
    if skip_phases:
        notes.append(f"{', '.join(sorted(skip_phases))} decisions are not valued in points by this evaluator")
    if skipped_auto:
        made = (
            "decision made by the referee for a forfeited seat is"
            if skipped_auto == 1
            else ("decisions made by the referee for forfeited seats are")
        )
        notes.append(f"{skipped_auto} {made} not analysed")
    return Analysis(name, players, len(rep.events), seats, decisions, match, notes)
