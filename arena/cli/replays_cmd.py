"""``arena replays``: list, show, export and verify the stored replays of matches."""

from __future__ import annotations

import contextlib
import json
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.console import Console
from rich.table import Table
from rich.text import Text

from arena.endings import (
    UnknownEnding,
    by_forfeit,
    is_forfeit,
    match_label,
    parse_termination_filter,
    seat_label,
)
from arena.engine import ReplayError, render, replay
from arena.engine.record import Replay
from arena.engine.render import BOARD_WIDTH, LEGEND
from arena.outpaths import output_problem, write_problem
from arena.safetext import small_int
from arena.termui import make_console
from arena.web.export import standalone_html
from arena.web.queries import FilterError, MatchFilters, MatchRow, list_matches, parse_day
from arena.web.replays import (
    DamagedReplayError,
    Verdict,
    describe_replay_error,
    load_view,
    replay_text,
    verify_match,
    verify_stored,
    verify_text,
)

from .common import DAMAGED_ADVICE, database, fail, refuse_path
from .recordfile import RecordFileTooLarge, read_record_text

app = typer.Typer(help="List, show, export and verify the replays of stored matches.", no_args_is_help=True)

FORMATS = ("jsonl", "json", "html")
SEAT_STYLES = ("dark_orange", "bold", "white", "deep_pink3")


def _day(text: str | None, option: str) -> Any:
    try:
        return parse_day(text, option)
    except FilterError as exc:
        raise typer.BadParameter(str(exc), param_hint=option) from None


def _players(m: MatchRow) -> Text:
    out = Text()
    for i, s in enumerate(m.seats):
        if i:
            out.append(" · ", style="dim")
        out.append(s.bot, style=SEAT_STYLES[s.seat % 4] + (" underline" if s.placing == 1 else ""))
        if s.score is not None:
            out.append(f" {s.score}")
        if s.placing is not None:
            out.append(f" ({s.placing})", style="dim")
        if by_forfeit(s.termination):
            style = "red" if is_forfeit(s.termination) else ""  # who forfeited, and who won by it
            out.append(f" {seat_label(s.termination, s.placing)}", style=style)
    return out


def _termination_option(text: str) -> str:
    """``--termination``: a stored value (``normal``, ``round-cap``, ``crashed``, ...) or a word the
    tables show for it (``finished``, ``round cap``), as the web app's filter takes them
    (:func:`arena.endings.parse_termination_filter`); a usage error otherwise."""
    try:
        return str(parse_termination_filter(text))
    except UnknownEnding as exc:
        raise typer.BadParameter(str(exc), param_hint="--termination") from None


@app.command("list")
def list_(
    tournament: Annotated[int | None, typer.Option(help="only this tournament's matches")] = None,
    bot: Annotated[str | None, typer.Option(help="only matches with this bot (NAME or NAME@N)")] = None,
    termination: Annotated[
        str | None, typer.Option(help="normal, round-cap, forfeit, or a seat's: timeout, crashed, ...")
    ] = None,
    since: Annotated[str | None, typer.Option(help="finished on or after this day (YYYY-MM-DD, UTC)")] = None,
    until: Annotated[
        str | None, typer.Option(help="finished on or before this day (YYYY-MM-DD, UTC)")
    ] = None,
    page: Annotated[int, typer.Option(min=1, help="page number")] = 1,
    per_page: Annotated[int, typer.Option(min=1, max=500, help="matches per page")] = 20,
) -> None:
    """List finished matches with replays, newest first, one page at a time."""
    if termination is not None:
        termination = _termination_option(termination)
    first, last = _day(since, "--since"), _day(until, "--until")
    if first is not None and last is not None and first > last:
        raise typer.BadParameter(f"{since} is after --until {until}: no day is in both", param_hint="--since")
    filters = MatchFilters(tournament=tournament, bot=bot, termination=termination, since=first, until=last)
    with database(readonly=True) as db:
        result = list_matches(db, filters, page=page, per_page=per_page)
    console = make_console()
    if not result.items:
        if result.total:  # a page past the last one: say which pages there are
            pages = "page 1" if result.pages == 1 else f"pages 1-{result.pages}"
            typer.echo(
                f"page {page} is past the last one: "
                + (f"the {result.total} matches make" if result.total > 1 else "the one match makes")
                + f" {pages} at {per_page} a page",
                err=True,
            )
        else:
            typer.echo("no finished matches that match these filters", err=True)
        return
    table = Table(
        title=f"Replays: page {result.page} of {result.pages}, matches {result.first}-{result.last} "
        f"of {result.total}, newest first"
    )
    table.add_column("match", justify="right")
    table.add_column("tournament")
    table.add_column("finished (UTC)", no_wrap=True)
    table.add_column("players: score (place)")
    table.add_column("termination")
    for m in result.items:
        finished = m.finished_at.strftime("%Y-%m-%d %H:%M:%S") if m.finished_at else "-"
        tname = f"{m.tournament_id}: {m.tournament}" if m.tournament_id is not None else "-"
        offenders = [(x.bot, x.termination or "") for x in m.seats if is_forfeit(x.termination)]
        term = Text(match_label(m.termination, offenders), style="red" if offenders else "")
        table.add_row(str(m.id), tname, finished, _players(m), term)
    console.print(table)
    if result.page < result.pages:
        typer.echo(f"next page: --page {result.page + 1}", err=True)


def _load(match_id: int) -> tuple[Replay, str]:
    with database(readonly=True) as db:
        text = replay_text(db, match_id)
    try:
        return replay(text), text
    except ReplayError as exc:
        raise fail(
            f"the replay of match {match_id} does not replay: {describe_replay_error(exc)}{DAMAGED_ADVICE}"
        ) from None


TargetArg = Annotated[
    str,
    typer.Argument(
        metavar="ID|FILE", help="a match id (see 'arena replays list') or a game record file (.jsonl)"
    ),
]


def _load_target(target: str) -> tuple[Replay, str, int | None]:
    """The replay a command-line target names, a label for it ("match 5" or the file's name) and
    its match id (None for a file).  Digits name a match unless a file of that name exists (as
    ``verify`` reads them); anything else is a file: unreadable or not a game record is exit 1."""
    number = small_int(target)
    if number is not None and not Path(target).exists():
        match_id = number
        rep, _text = _load(match_id)
        return rep, f"match {match_id}", match_id
    path = Path(target)
    try:
        text = read_record_text(path)
    except OSError as exc:
        raise fail(
            f"{target!r} is neither a match id nor a readable file ({exc.strerror}); "
            "see 'arena replays list' for the ids",
            2,
        ) from None
    except RecordFileTooLarge as exc:
        raise fail(str(exc)) from None
    except UnicodeDecodeError:
        raise fail(f"{path} is not UTF-8 text; is it a game record?") from None
    try:
        return replay(text), path.name, None
    except ReplayError as exc:
        raise fail(f"{path} does not replay: {describe_replay_error(exc)}") from None


def _event_line(k: int, event: dict[str, Any], names: list[str]) -> str:
    if "throw" in event:
        return f"#{k} {event['throw']}"
    seat = event.get("seat", 0)
    who = (
        f"seat {seat} ({names[seat]})" if isinstance(seat, int) and 0 <= seat < len(names) else f"seat {seat}"
    )
    extras = []
    ms = event.get("ms")
    if isinstance(ms, float) or (type(ms) is int and abs(ms) < 2**1023):  # an extra: shown when a number
        extras.append(f"{ms:.1f} ms")
    if event.get("forced"):
        extras.append("forced")
    if event.get("auto"):
        extras.append("auto: seat forfeited")
    tail = f"  [{', '.join(extras)}]" if extras else ""
    return f"#{k} {who}: {event['action']}{tail}"


def _names(rep: Replay) -> list[str]:
    players = rep.states[0].players
    names = rep.header.get("seating")
    if isinstance(names, list) and len(names) == players:
        return [str(n) for n in names]
    return [f"seat {k}" for k in range(players)]


@app.command()
def show(
    target: TargetArg,
    step: Annotated[int | None, typer.Option(help="only the board after event N (0 = the start)")] = None,
    brief: Annotated[
        bool, typer.Option(help="boards only after lounger actions and turn ends, not after every step")
    ] = False,
    color: Annotated[bool | None, typer.Option(help="ANSI colours (default: when a terminal)")] = None,
) -> None:
    """Show a match's replay (or a game record file's): every event with the board after it, or one
    step with --step."""
    rep, label, _match = _load_target(target)
    names = _names(rep)
    use_color = sys.stdout.isatty() if color is None else color

    def out(text: str) -> None:
        typer.echo(text, color=use_color)

    n = len(rep.events)
    seats = ", ".join(f"seat {k}: {name}" for k, name in enumerate(names))
    if step is not None:
        if not 0 <= step <= n:
            raise fail(f"--step must be 0..{n} (this replay has {n} events)", 2)
        what = "the start" if step == 0 else _event_line(step, rep.events[step - 1], names)
        out(f"{label} ({seats}), step {step} of {n}: after {what}")
        out(render(rep.states[step], color=use_color))
        return
    out(f"{label} ({seats}): {n} events")
    out(render(rep.states[0], color=use_color))
    for k, event in enumerate(rep.events, start=1):
        out(_event_line(k, event, names))
        state = rep.states[k]
        action = str(event.get("action", ""))
        quiet = "throw" in event or action.split(" ")[0] in ("keep", "chip", "place", "stop")
        if not brief or not quiet or state.phase.label == "over":
            out(render(state, color=use_color))
    res = rep.result
    out(f"result: scores {res['scores']}, placings {res['placings']}, end: {_ending(res, names)}")
    for f in res.get("forfeits", []):
        where = f"after event {f.get('at_event')}"
        out(f"forfeit: seat {f.get('seat')} forfeited ({f.get('reason')}) {where}: {f.get('detail', '')}")


def _ending(result: dict[str, Any], names: list[str]) -> str:
    """The replay's ending in words, naming each seat that forfeited."""
    offenders = []
    for f in result.get("forfeits", []):
        seat = f.get("seat")
        who = names[seat] if isinstance(seat, int) and 0 <= seat < len(names) else f"seat {seat}"
        offenders.append((who, str(f.get("reason"))))
    return match_label(result.get("termination"), offenders)


def _export_format(fmt: str | None, out: Path | None) -> str:
    """The export format: ``--format`` when given, else the one ``--out``'s extension names
    (.html, .json, .jsonl), else jsonl (with a note on stderr when ``--out`` has another
    extension: the file's name then says nothing of what it holds)."""
    if fmt is not None:
        if fmt not in FORMATS:
            raise typer.BadParameter(f"choose from {', '.join(FORMATS)}", param_hint="--format")
        return fmt
    suffix = out.suffix.lower().lstrip(".") if out is not None else ""
    if suffix in FORMATS:
        return suffix
    if out is not None and suffix:
        typer.echo(
            f"note: {out.name}'s extension names no export format (.jsonl, .json, .html): writing "
            f"jsonl, the game record; --format chooses another",
            err=True,
        )
    return "jsonl"


@app.command()
def export(
    target: Annotated[str, typer.Argument(metavar="ID", help="a match id (see 'arena replays list')")],
    fmt: Annotated[
        str | None,
        typer.Option(
            "--format",
            help="jsonl (the stored record), json (every state) or html (viewer); default: the one "
            "--out's extension names (.jsonl, .json, .html), else jsonl",
            show_default=False,
        ),
    ] = None,
    out: Annotated[
        Path | None,
        typer.Option(help="write here, creating missing folders (default: standard output)"),
    ] = None,
) -> None:
    """Export a replay: the game record, the viewer's JSON, or a self-contained HTML viewer.

    An unknown match is refused (exit 1) before --out is looked at, so nothing is created for
    it; an --out path that cannot be written is refused (exit 2) before anything is written."""
    number = small_int(target)
    if number is None:
        raise fail(
            f"{target!r} is not a match id: export takes the id of a stored match (see 'arena replays "
            "list'); a game record file is already the jsonl export ('arena replays show FILE' shows it)",
            2,
        )
    match_id = number
    fmt = _export_format(fmt, out)
    with database(readonly=True) as db:
        if fmt == "jsonl":
            content = replay_text(db, match_id)
        else:
            try:
                _m, view = load_view(db, match_id)
            except DamagedReplayError as exc:
                raise fail(f"{exc}{DAMAGED_ADVICE}") from None
            if fmt == "json":
                content = json.dumps(view, separators=(",", ":"), ensure_ascii=False) + "\n"
            else:
                content = standalone_html(view, f"Pool Arena — match {match_id}")
    if out is None:
        sys.stdout.write(content)
        sys.stdout.flush()
        return
    refuse_path(out, output_problem(out))
    if (failed := write_problem(out, content)) is not None:
        raise fail(f"cannot write {out}: {failed}")
    typer.echo(f"wrote {out} ({len(content.encode('utf-8'))} bytes, {fmt})", err=True)


@app.command()
def verify(
    targets: Annotated[
        list[str] | None, typer.Argument(metavar="ID|FILE", help="match ids and/or .jsonl files")
    ] = None,
    all_: Annotated[bool, typer.Option("--all", help="every finished match in the database")] = False,
    tournament: Annotated[int | None, typer.Option(help="with --all: only this tournament")] = None,
    verbose: Annotated[
        bool, typer.Option("--verbose", "-v", help="with --all: also list good replays")
    ] = False,
) -> None:
    """Re-simulate replays through the engine and check stored hashes: OK, or exactly where it breaks.

    A damaged database file does not stop --all: each match whose rows cannot be read is named.
    Exit status 1 when any replay fails.
    """
    targets = targets or []
    if not targets and not all_:
        raise typer.BadParameter("give match ids or files, or --all", param_hint="ID|FILE")
    if tournament is not None and not all_:
        raise typer.BadParameter("--tournament only goes with --all", param_hint="--tournament")
    console = make_console()
    verdicts: list[Verdict] = []

    def report(v: Verdict, always: bool) -> None:
        verdicts.append(v)
        if always or not v.ok:
            console.print(Text(v.message(), style="green" if v.ok else "red"), soft_wrap=True)

    files = {t for t in targets if small_int(t) is None or Path(t).exists()}
    for name in files:  # every file is readable before anything is reported (a usage error: exit 2)
        if not Path(name).is_file():
            path = Path(name)
            other = "not a regular file" if path.exists() else "no such file"
            what = "a directory" if path.is_dir() else other
            raise fail(f"cannot read {name}: {what} (not a game record file, nor a match id)", 2)
    needs_db = all_ or any(t not in files for t in targets)
    with database(readonly=True) if needs_db else contextlib.nullcontext() as db:
        for target in targets:  # in the order given
            if target not in files:
                assert db is not None
                report(verify_match(db, int(target)), True)
                continue
            path = Path(target)
            try:
                text = read_record_text(path)
            except OSError as exc:
                raise fail(f"cannot read {path}: {exc.strerror} (not a file, nor a match id)", 2) from None
            except RecordFileTooLarge:
                report(Verdict(str(path), False, reason="larger than 64 MiB: not a game record"), True)
                continue
            except UnicodeDecodeError:
                report(Verdict(str(path), False, reason="not UTF-8 text; is it a game record?"), True)
                continue
            report(verify_text(text, str(path)), True)
        if all_:  # damaged pages name the matches they hold and the run carries on
            assert db is not None
            for v in verify_stored(db, MatchFilters(tournament=tournament)):
                report(v, verbose)
    bad = sum(1 for v in verdicts if not v.ok)
    summary = f"verified {len(verdicts)} replay{'s' if len(verdicts) != 1 else ''}: {len(verdicts) - bad} OK"
    summary += f", {bad} failed" if bad else ""
    console.print(Text(summary, style="red bold" if bad else "green bold"))
    if bad:
        raise typer.Exit(1)


@app.command("analyse")
def analyse(
    target: TargetArg,
    as_json: Annotated[bool, typer.Option("--json", help="the analysis as JSON on standard output")] = False,
    min_loss: Annotated[
        float, typer.Option(min=0.0, help="list only decisions that lost at least this many points")
    ] = 0.0,
    evaluator: Annotated[
        str, typer.Option(help="value (the learned evaluation, default) or search (the search bot's values)")
    ] = "value",
) -> None:
    """Annotate every decision of a match with the expected value of the chosen action and of the
    best one (the learned evaluation + exact turn expectimax); per seat, the expected points lost.

    Values are expected final margins (score minus the mean of the others) in points; a
    decision's loss is best minus chosen.  Nothing is stored: the analysis is recomputed."""
    from arena.strength.analysis import UnknownEvaluatorError, evaluator_by_name
    from arena.strength.analysis import analyse as run_analysis
    from arena.strength.value import WeightsError

    try:
        decide, label, skip = evaluator_by_name(evaluator)
    except UnknownEvaluatorError as exc:
        raise typer.BadParameter(str(exc), param_hint="--evaluator") from None
    except WeightsError as exc:
        raise fail(str(exc)) from None
    rep, what, match_id = _load_target(target)
    result = run_analysis(rep, decide, label, match=match_id, seating=_names(rep), skip_phases=skip)
    if as_json:
        sys.stdout.write(json.dumps(result.to_json(), separators=(",", ":")) + "\n")
        return
    console = make_console()
    title = what if match_id is None else f"Match {match_id}"
    shown = [d for d in result.decisions if d.loss >= min_loss]
    which = "every decision" if min_loss <= 0 else f"the decisions that lost {min_loss:g} points or more"
    table = Table(title=f"{title}: {which}, valued by {result.evaluator}")
    for name, justify in (("step", "right"), ("turn", "right"), ("seat", "left"), ("phase", "left"),
                          ("chosen", "left"), ("value", "right"), ("best", "left"), ("value ", "right"),
                          ("loss", "right")):  # fmt: skip
        table.add_column(name, justify=justify)  # type: ignore[arg-type]
    for d in shown:
        style = "bold red" if d.costly else ("yellow" if d.loss >= 0.5 else "")
        table.add_row(
            str(d.step), str(d.turn), f"{d.seat} {result.seats[d.seat].name}", d.phase, d.chosen,
            f"{d.chosen_value:+.2f}", "=" if d.best == d.chosen else d.best, f"{d.best_value:+.2f}",
            f"{d.loss:.2f}", style=style,
        )  # fmt: skip
    if shown:
        console.print(table)
    else:
        console.print(f"{title}: no decision lost {min_loss:g} points or more (valued by {result.evaluator})")
    summary = Table(title="Expected points lost, by seat (costliest decisions in bold red)")
    for name in ("seat", "bot", "score", "decisions", "points lost", "per decision", "costliest steps"):
        summary.add_column(name)
    for s in result.seats:
        summary.add_row(
            str(s.seat), s.name, "" if s.score is None else str(s.score), str(s.decisions),
            f"{s.total_loss:.2f}", f"{s.mean_loss:.3f}", ", ".join(str(k) for k in s.costliest),
        )  # fmt: skip
    console.print(summary)
    for note in result.notes:
        console.print(f"note: {note}")


# ---- a full-screen terminal viewer ------------------------------------------------------------

KEYS = {
    "\x1b[C": "next",
    "l": "next",
    "\x1b[D": "prev",
    "h": "prev",
    "\x1b[B": "next-turn",
    "j": "next-turn",
    "\x1b[A": "prev-turn",
    "k": "prev-turn",
    "\x1b[H": "first",
    "\x1b[1~": "first",
    "g": "first",
    "\x1b[F": "last",
    "\x1b[4~": "last",
    "G": "last",
    " ": "play",
    "+": "faster",
    "-": "slower",
    "?": "legend",
    "q": "quit",
    "\x1b": "close",  # Esc: closes the legend when it is open, else quits
}
SPEEDS = (1.0, 2.0, 4.0, 8.0, 16.0, 32.0)


class Navigator:
    """Where a terminal viewer stands in a replay, and what each key does (no terminal needed)."""

    def __init__(self, rep: Replay) -> None:
        self.rep = rep
        self.step = 0
        self.playing = False
        self.speed = 2  # index into SPEEDS
        self.legend = False  # the board's legend under it ("?")
        self._tallest: dict[tuple[int, bool], int] = {}  # (width, legend) -> lines (see tallest)

    @property
    def last(self) -> int:
        """The last step (the number of events)."""
        return len(self.rep.events)

    def _turn_start(self, direction: int) -> int:
        states, k = self.rep.states, self.step
        j = k + direction
        while 0 < j < self.last and states[j].turn == states[k].turn:
            j += direction
        if direction < 0:
            while j > 0 and states[j - 1].turn == states[j].turn:
                j -= 1
        return max(0, min(self.last, j))

    def press(self, key: str) -> bool:
        """Apply a key (raw text, e.g. ``"\\x1b[C"``); False when the viewer should close."""
        action = KEYS.get(key)
        moves: dict[str, Callable[[], int]] = {
            "next": lambda: self.step + 1,
            "prev": lambda: self.step - 1,
            "next-turn": lambda: self._turn_start(+1),
            "prev-turn": lambda: self._turn_start(-1),
            "first": lambda: 0,
            "last": lambda: self.last,
        }
        if action == "close" and self.legend:
            self.legend = False
            return True
        if action in ("quit", "close"):
            return False
        if action is not None and action in moves:
            self.step = max(0, min(self.last, moves[action]()))
            self.playing = False
        elif action == "play":
            self.playing = not self.playing
            if self.playing and self.step >= self.last:
                self.step = 0
        elif action == "faster":
            self.speed = min(len(SPEEDS) - 1, self.speed + 1)
        elif action == "slower":
            self.speed = max(0, self.speed - 1)
        elif action == "legend":
            self.legend = not self.legend
        return True

    def tallest(self, console: Console, names: list[str], title: str, width: int) -> int:
        """The lines the tallest screen of this replay takes at ``width`` (with the legend as it is
        now), so the viewer asks for one size, not one per step.  Every step is measured once per
        width and legend (about 1 ms a step: 0.2 s for a 250-step game), only when a screen does
        not fit, and cached."""
        from .fullscreen import lines_of

        key = (width, self.legend)
        if key not in self._tallest:
            saved, playing = self.step, self.playing
            try:
                needed = 0
                for k in range(self.last + 1):
                    self.step = k
                    needed = max(needed, lines_of(console, self.screen(names, title), width))
            finally:
                self.step, self.playing = saved, playing
            self._tallest[key] = needed
        return self._tallest[key]

    def tick(self) -> None:
        """One autoplay step (stops at the end)."""
        if self.playing:
            self.step = min(self.last, self.step + 1)
            self.playing = self.step < self.last

    def screen(self, names: list[str], title: str) -> Text:
        """What the viewer shows at the current step."""
        k, rep = self.step, self.rep
        out = Text()
        out.append(f"{title}   step {k}/{self.last}", style="bold")
        out.append(f"   {'▶ playing' if self.playing else '❚❚ paused'} {SPEEDS[self.speed]:g} steps/s\n")
        if k == 0:
            out.append("start: each seat in turn places a towel\n")
        else:
            event = rep.events[k - 1]
            out.append(_event_line(k, event, names) + "\n", style="cyan")
            legal = event.get("legal")
            if legal:
                shown = ", ".join(legal[:12]) + (f", … ({len(legal)} in all)" if len(legal) > 12 else "")
                out.append(f"legal: {shown}\n", style="dim")
        for f in rep.result.get("forfeits", []):
            at = f.get("at_event", 0)  # an extra: a forfeit whose event is not a number shows at once
            if type(at) is not int or at <= k:
                out.append(f"seat {f.get('seat')} forfeited after event {f.get('at_event')}: ", style="red")
                out.append(f"{f.get('reason')} — {f.get('detail', '')}\n", style="red")
        out.append("\n")
        out.append(Text.from_ansi(render(rep.states[k], color=True)))
        if k == self.last:
            res = rep.result
            ending = _ending(res, names)
            out.append(f"\nresult: scores {res['scores']}, placings {res['placings']}, end: {ending}\n")
        if self.legend:
            out.append("\n" + LEGEND + "\n", style="dim")
        out.append(
            "\n← → step · ↑ ↓ turn · space play/pause · + - speed · Home/End (g/G) · ? legend · q (Esc) quit",
            style="dim",
        )
        return out


@app.command()
def view(target: TargetArg) -> None:
    """Step through a replay full-screen in the terminal (arrow keys, space, ? legend, q).

    It redraws when the terminal is resized, and says so when the terminal is too small."""
    from .fullscreen import run_fullscreen

    rep, label, _match = _load_target(target)  # a wrong target is named first, terminal or not
    if not (sys.stdin.isatty() and sys.stdout.isatty()):
        raise fail("'arena replays view' needs a terminal; use 'arena replays show' instead", 2)
    nav = Navigator(rep)
    names = _names(rep)
    title = f"{label}: " + " · ".join(f"{k}:{n}" for k, n in enumerate(names))
    console = Console()
    run_fullscreen(
        lambda: nav.screen(names, title),
        nav.press,
        timeout=lambda: 1 / SPEEDS[nav.speed] if nav.playing else None,
        on_timeout=nav.tick,
        min_width=BOARD_WIDTH,
        min_lines=lambda width: nav.tallest(console, names, title, width),
        console=console,
    )
