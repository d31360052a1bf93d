"""A match's results: the :class:`MatchResult` its scheduler receives, and the result lines its
seats are told (a forfeited seat its own line at once, every seat all lines at the end)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from arena.endings import MatchEnd
from arena.engine import State, scores
from arena.engine.scoring import placings_with_forfeits

from .channel import Result, SeatLine
from .crashinfo import without_stderr
from .faults import Forfeit, Reason
from .result import MatchResult, SeatOutcome
from .timecontrol import SeatClock


def forfeit_line(
    match_id: str, state: State, forfeited: Sequence[int], seat: int, reason: Reason, detail: str
) -> Result:
    """What ``seat`` is told when it forfeits (``forfeited``: every seat out so far, itself included)."""
    pts = scores(state)
    placing = placings_with_forfeits(pts, list(forfeited))[seat]
    return Result(match_id, (SeatLine(seat, pts[seat], placing, str(reason), detail[:1000]),))


def match_result(
    *,
    match_id: str,
    seed: int,
    names: Sequence[str],
    state: State,
    forfeits: Mapping[int, Forfeit],
    clocks: Sequence[SeatClock],
    replay: str,
    duration: float,
    events: int,
) -> MatchResult:
    """The result of a match that ended in ``state`` with ``forfeits``."""
    pts = scores(state)
    places = placings_with_forfeits(pts, list(forfeits))
    termination = state.termination if state.termination is not None else str(MatchEnd.FORFEIT)
    seats = []
    for seat, name in enumerate(names):
        f = forfeits.get(seat)
        clock = clocks[seat]
        seats.append(
            SeatOutcome(
                seat=seat,
                name=name,
                score=pts[seat],
                placing=places[seat],
                termination=str(f.reason) if f else termination,
                detail=f.detail if f else "",
                think_total=clock.total,
                think_max=clock.max,
                decisions=clock.decisions,
                cpu_time=clock.cpu_total,
            )
        )
    return MatchResult(
        match_id=match_id,
        seed=seed,
        players=len(names),
        termination=termination,
        seats=tuple(seats),
        replay=replay,
        forfeits=tuple(forfeits[s] for s in sorted(forfeits)),
        duration=duration,
        events=events,
    )


def result_lines(result: MatchResult, to_seat: int) -> Result:
    """Every seat's line, as ``to_seat`` is told them at the end: its own in full, another seat's
    crash without the line that bot printed on stderr (:func:`without_stderr`: a bot's stderr is
    its owner's, and a bot could otherwise collect its opponents')."""

    def detail(s: SeatOutcome) -> str:
        if s.seat == to_seat or s.termination != str(Reason.CRASHED) or not s.detail:
            return s.detail
        return without_stderr(s.detail)

    return Result(
        result.match_id,
        tuple(SeatLine(s.seat, s.score, s.placing, s.termination, detail(s)) for s in result.seats),
    )
