"""Entry point of the ``arena`` command.

Subcommands load lazily: each is registered below by name, where it lives (``"module:attribute"``,
a Typer app or a function) and its one-line help for ``arena --help``; its module is imported only
when that subcommand runs or its own ``--help`` is asked.  To add a subcommand, add one line to
:data:`SUBCOMMANDS`.  Only the standard library is imported before :func:`main` has set up Ctrl-C
handling (one line, exit 130; see :mod:`arena.cli.interrupt`).
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from typing import TYPE_CHECKING

from .closed_output import (
    escape_unencodable,
    exit_output_gone,
    forget_unusable_width,
    open_standard_streams,
    output_gone,
    say_last,
)
from .interrupt import (
    Interrupted,
    Terminated,
    during_interrupt,
    exit_interrupted,
    exit_terminated,
    from_interrupt,
    guard_shutdown,
    install,
)

if TYPE_CHECKING:
    import typer

HELP = "Pool Arena: tournaments and bot matches for the dice game Cool am Pool."

# (name, "module:attribute", one-line help shown by `arena --help`), in the order listed there.
# fmt: off
SUBCOMMANDS: tuple[tuple[str, str, str], ...] = (
    ("match", "arena.cli.match_cmd:match",
     "Run one match between 2-4 bots launched as processes; show progress and the result."),
    ("play", "arena.cli.play_cmd:play",
     "Play one seat against 1-3 bots in the browser: prints the page's address, then referees."),
    ("evaluate", "arena.cli.evaluate_cmd:evaluate",
     "Measure CANDIDATE against the baseline with duplicate dice; report share, score and Elo."),
    ("serve", "arena.cli.serve_cmd:serve",
     "Run the arena server: web app with accounts and uploads, match workers, and the lobby."),
    ("submit", "arena.cli.submit_cmd:submit",
     "Upload a bot to an arena server, wait for its validation and print the result."),
    ("users", "arena.cli.users_cmd:app", "Web accounts: make the first admin, make API tokens."),
    ("web", "arena.cli.web_cmd:web",
     "Serve the web app: leaderboard, tournaments, matches and the replay viewer (Ctrl-C stops)."),
    ("worker", "arena.cli.worker_cmd:worker",
     "Start Dask worker processes that play tournament matches for a scheduler."),
    ("engine", "arena.cli.engine_cmd:app", "Play, show and verify games with the rules engine alone."),
    ("bots", "arena.cli.bots_cmd:app", "Register and manage bots (each upload is an immutable version)."),
    ("ladder", "arena.cli.ladder_cmd:app",
     "The continuous ladder: run it (until stopped) and show its standings."),
    ("tournament", "arena.cli.tournament_cmd:app",
     "Tournaments with duplicate dice: round robin, gauntlet, Swiss, knockout."),
    ("leaderboard", "arena.cli.leaderboard_cmd:app",
     "Ratings with intervals; standing leaderboards in leaderboards/."),
    ("replays", "arena.cli.replays_cmd:app", "List, show, export and verify the replays of stored matches."),
    ("db", "arena.cli.db_cmd:app", "Check, back up and upgrade the database."),
    ("train", "arena.cli.train_cmd:train",
     "Train the learned evaluation by self-play (reproducible, resumable, plots its learning curve)."),
)
# fmt: on

_app: typer.Typer | None = None


def _print_version(value: bool) -> None:
    """``--version``: the installed package's version and the rules versions its engine plays."""
    if not value:
        return
    from importlib.metadata import PackageNotFoundError, version

    import typer

    from arena.engine.variants import DEFAULT, RELEASED

    try:
        installed = version("pool-arena")
    except PackageNotFoundError:  # run from a checkout that was never installed
        installed = "(not installed)"
    others = ", ".join(f"{v!r} ({r.variant})" for v, r in RELEASED.items() if v != DEFAULT.version)
    typer.echo(f"arena {installed}; rules version {DEFAULT.version!r} ({DEFAULT.variant}), also {others}")
    raise typer.Exit(0)


def _root_callback() -> Callable[..., None]:
    """The top-level group's callback: nothing to do before the subcommand runs; ``--version``
    prints and exits (built here: typer is imported only once :func:`main` runs)."""
    import typer

    def root(
        version: bool = typer.Option(
            False, "--version", is_eager=True, callback=_print_version, help="Print the version and exit."
        ),
    ) -> None:
        """The top-level group: the subcommand does the work."""

    return root


def build_app() -> typer.Typer:
    """The ``arena`` Typer app over :data:`SUBCOMMANDS` (built once; imports no subcommand)."""
    global _app
    if _app is None:
        import typer

        from . import helptypes
        from .lazy import LazyCommand, lazy_group

        helptypes.install()

        specs = {name: LazyCommand(name, target, text) for name, target, text in SUBCOMMANDS}
        _app = typer.Typer(
            cls=lazy_group(specs),
            callback=_root_callback(),  # a callback makes Typer build a group even with no eager commands
            help=HELP,
            no_args_is_help=True,
            pretty_exceptions_enable=False,
        )
    return _app


def __getattr__(name: str) -> typer.Typer:
    """``arena.cli.main.app``: the Typer app, built on first use (for ``typer.testing.CliRunner``)."""
    if name == "app":
        return build_app()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def refuse_undecodable_arguments(argv: list[str]) -> str | None:
    """The error line for the first argument of ``argv`` (the words after the program's name)
    that is not UTF-8 text, or None.  Python hands such bytes on as lone surrogates, which no
    name, database column or message can hold: ``arena bots show $'a\\xffb'`` ended in "'utf-8'
    codec can't encode character '\\udcff'", and ``arena bots add`` of such a file name in an
    OSError."""
    for position, arg in enumerate(argv, start=1):
        try:
            arg.encode("utf-8")
        except UnicodeEncodeError:
            shown = arg.encode("utf-8", "surrogateescape").decode("ascii", "backslashreplace")
            return (
                f"error: argument {position} ('{shown}') is not UTF-8 text; Pool Arena takes names, "
                "paths and options in UTF-8: retype it, or rename the file to a UTF-8 name"
            )
    return None


def main() -> None:
    """Run the ``arena`` command line; Ctrl-C at any moment prints one line and exits 130; a
    command whose output went away ends quietly (:mod:`arena.cli.closed_output`)."""
    open_standard_streams()
    forget_unusable_width()
    escape_unencodable()
    wrong = refuse_undecodable_arguments(sys.argv[1:])
    if wrong is not None:
        print(wrong, file=sys.stderr)
        raise SystemExit(2)
    try:
        install()  # inside the guard: a Ctrl-C while it imports logging is the interrupt too
        build_app()(prog_name="arena")
    except (KeyboardInterrupt, Interrupted):
        exit_interrupted()
    except SystemExit as exc:
        if from_interrupt(exc):
            exit_interrupted()
        if isinstance(exc, Terminated):  # SIGTERM/SIGHUP: the command's clean-up has run
            say_last(exc.message)
            exit_terminated(exc.signum + 128)
        raise
    except BaseException as exc:
        if during_interrupt(exc):  # e.g. a second Ctrl-C broke the clean-up of the first
            exit_interrupted()
        if output_gone(exc):  # `| head` left, or the terminal hung up: no traceback to nobody
            exit_output_gone(exc)
        raise
    finally:
        guard_shutdown()


if __name__ == "__main__":  # pragma: no cover - `python -m arena.cli.main`
    main()
