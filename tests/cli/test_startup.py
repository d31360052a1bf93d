"""``arena`` imports per subcommand: ``arena --help`` lists every command without importing any of
them, and a command loads only what it needs (checked with ``python -X importtime`` on the real
entry point; the timings themselves are in ``benchmarks/cli.py``)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from arena.cli.lazy import LazyCommand
from arena.cli.main import SUBCOMMANDS

from .helpers import ARENA, ROOT, arena_env, run_arena

HEAVY = ("sqlmodel", "sqlalchemy", "alembic", "numpy", "grpc", "fastapi", "distributed", "pydantic_core")


def imported(args: list[str], home: Path) -> tuple[set[str], subprocess.CompletedProcess[str]]:
    """The modules ``arena ARGS`` imported, and how it ended."""
    run = subprocess.run(
        [sys.executable, "-X", "importtime", str(ARENA), *args], cwd=home, env=arena_env(home),
        capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    names = {
        line.rsplit("|", 1)[1].strip() for line in run.stderr.splitlines() if line.startswith("import time:")
    }
    return names, run


def top(names: set[str]) -> set[str]:
    return {n.split(".")[0] for n in names}


def test_help_lists_every_command_and_imports_none(home: Path) -> None:
    names, run = imported(["--help"], home)
    assert run.returncode == 0, run.stderr[-2000:]
    for name, _target, text in SUBCOMMANDS:
        assert f" {name} " in run.stdout, name
        assert text.split()[0] in run.stdout
    assert not top(names) & set(HEAVY), sorted(top(names) & set(HEAVY))
    entry = {
        "arena",
        "arena.cli",
        "arena.cli.entry",  # the console script's module
        "arena.cli.main",
        "arena.cli.lazy",
        "arena.cli.interrupt",
        "arena.cli.closed_output",
        "arena.cli.helptypes",  # the --help type column: re and Typer, both loaded already
    }
    ours = {n for n in names if n.split(".")[0] == "arena"}
    assert ours <= entry, sorted(ours - entry)


def test_engine_show_loads_no_store_no_grpc_no_numpy(home: Path) -> None:
    names, run = imported(["engine", "show", "--legend"], home)
    assert run.returncode == 0, run.stderr[-2000:]
    assert not top(names) & {"sqlmodel", "sqlalchemy", "alembic", "numpy", "grpc"}
    assert "arena.cli.bots_cmd" not in names and "arena.store.db" not in names


def test_bots_list_does_not_load_numpy_or_other_commands(home: Path) -> None:
    added = run_arena(["bots", "add", "rnd", str(ROOT / "bots" / "random_bot.py"), "--no-check"], home)
    assert added.returncode == 0, added.stderr
    names, run = imported(["bots", "list"], home)
    assert run.returncode == 0, run.stderr[-2000:]
    assert "rnd" in run.stdout
    assert "numpy" not in top(names)
    others = {target.split(":")[0] for name, target, _ in SUBCOMMANDS if name != "bots"}
    assert not names & others, sorted(names & others)
    # on the default SQLite database the listing is answered without the ORM (arena.store.quickread)
    assert not top(names) & {"sqlmodel", "sqlalchemy", "alembic", "grpc"}, sorted(top(names) & set(HEAVY))


def test_bots_list_help_loads_no_store(home: Path) -> None:
    names, run = imported(["bots", "list", "--help"], home)
    assert run.returncode == 0, run.stderr[-2000:]
    store = {"sqlmodel", "sqlalchemy", "alembic", "numpy", "grpc"}  # typer itself may load pydantic here
    assert not top(names) & store, sorted(top(names) & store)


@pytest.mark.parametrize(("name", "target", "text"), SUBCOMMANDS, ids=[s[0] for s in SUBCOMMANDS])
def test_registered_help_matches_the_command(name: str, target: str, text: str) -> None:
    """The one-line help kept in main.py (so listing imports nothing) is the command's own."""
    command = LazyCommand(name, target, text).load()
    own = " ".join((command.help or "").split("\n\n")[0].split())
    assert own == text, f"arena.cli.main.SUBCOMMANDS says {text!r} for {name}, the command says {own!r}"


@pytest.mark.parametrize("module", ["arena.cli.entry", "arena.cli.main"])
def test_python_m_runs_the_command(home: Path, module: str) -> None:
    """``python -m arena.cli.entry`` (the console script's module) ran nothing and exited 0, so a
    ``verify`` of a file that is not there "passed"; it runs the command as ``arena`` does."""
    run = subprocess.run(
        [sys.executable, "-m", module, "engine", "verify", "no-such-file.jsonl"], cwd=home,
        env=arena_env(home), capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert run.returncode == 2, (run.returncode, run.stderr)
    assert "no-such-file.jsonl" in run.stderr and "Traceback" not in run.stderr, run.stderr
