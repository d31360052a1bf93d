"""A bot played by its path sees its own folder, read-only, but never the arena's files in it.

The default data directory is ``./arena-data`` in the current folder, so ``arena match mybot.py
random`` (the README's own way of trying a bot) ran the bot in the folder that holds the database,
every registered bot's file and the bots' logs.  The sandboxed bot read the database while it
played, and in it the seed of its own match: every throw to come.  Now the data directory, the
database's files and the log folder are covered where they lie in the bot's folder (and when the
bot's folder is one of them, only the bot's file is in sight).  Real ``arena match`` commands,
real sandbox."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from arena.sandbox import bwrap_problem

HERE = Path(__file__).resolve().parent
ARENA = [str(Path(sys.executable).parent / "arena")]
SEED = "7318264590153728461"  # secret from the bot: it must not find it anywhere

pytestmark = pytest.mark.skipif(bwrap_problem() is not None, reason=f"no bubblewrap: {bwrap_problem()}")


def _match(folder: Path, env: dict[str, str], *extra: str) -> tuple[str, str]:
    """Play the spy (copied into ``folder``) against random from ``folder``; its seed and the
    spy's stderr lines."""
    shutil.copyfile(HERE / "data_spy_bot.py", folder / "spy.py")
    proc = subprocess.run(
        [*ARENA, "match", "spy.py", "random", "--seed", SEED, *extra],
        cwd=folder, env=env, capture_output=True, text=True, timeout=180,
    )  # fmt: skip
    assert proc.returncode in (0, 3), proc.stdout + proc.stderr
    assert f"seed {SEED}" in proc.stderr, proc.stderr[-2000:]  # (the header: the match that was played)
    logs = [p for p in folder.rglob("*spy*.stderr.log")]
    assert len(logs) == 1, proc.stdout
    spied = "\n".join(line for line in logs[0].read_text().splitlines() if line.startswith("SPY "))
    assert "SPY files:" in spied and "SPY seed:" in spied, logs[0].read_text()[-2000:]
    return SEED, spied


def _env(**extra: str) -> dict[str, str]:
    env = {
        k: v for k, v in os.environ.items() if k not in ("ARENA_HOME", "ARENA_DATABASE_URL", "ARENA_SANDBOX")
    }
    return {**env, **extra}


def test_the_default_data_directory_beside_the_bot_is_out_of_its_sight(tmp_path: Path) -> None:
    subprocess.run(
        [*ARENA, "match", "greedy", "random"], cwd=tmp_path, env=_env(), capture_output=True, timeout=180
    )
    seed, spied = _match(tmp_path, _env())
    assert seed not in spied, f"the bot read its own match's seed from the database:\n{spied}"
    assert "arena.db" not in spied and "greedy_bot.py" not in spied and "random.stderr" not in spied, spied


def test_a_database_file_in_the_bots_folder_is_out_of_its_sight(tmp_path: Path) -> None:
    home = tmp_path / "home"
    url = f"sqlite:///{tmp_path / 'club.db'}"
    seed, spied = _match(tmp_path, _env(ARENA_HOME=str(home), ARENA_DATABASE_URL=url))
    assert seed not in spied, f"the bot read its own match's seed from the database:\n{spied}"
    assert "SPY seed: none" in spied, spied  # its name may show; what is in it may not


def test_a_log_folder_that_is_the_bots_folder_shows_only_the_bot(tmp_path: Path) -> None:
    seed, spied = _match(tmp_path, _env(ARENA_HOME=str(tmp_path / "home")), "--logs", str(tmp_path))
    assert seed not in spied
    files = spied.split("SPY files: ", 1)[1].splitlines()[0]
    assert files == "spy.py", f"the bot saw more of the log folder than itself: {files}"
