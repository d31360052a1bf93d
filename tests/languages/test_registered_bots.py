"""Bots that are a single file the arena can execute: the Node bot's single-file build and the
binary bot (a zipapp), registered with ``arena bots add`` and played in a tournament, as a user
would (the console script in a subprocess, a private ARENA_HOME, the sandbox when it works here)."""

from __future__ import annotations

import os
import sqlite3
import subprocess
import sys
import zipfile
import zlib
from pathlib import Path

from arena.engine import replay
from arena.sandbox.bwrap import bwrap_problem

from .conftest import BINARY_DIR, GREEDY

ARENA = Path(sys.executable).parent / "arena"


def arena(*args: str, home: Path) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if k != "ARENA_DATABASE_URL"}
    env.update(ARENA_HOME=str(home), COLUMNS="200")
    return subprocess.run(
        [str(ARENA), *args], cwd=home.parent, env=env, capture_output=True, text=True, timeout=120
    )


def test_binary_bot_build_is_one_reproducible_executable(binary_bot: Path, tmp_path: Path) -> None:
    again = tmp_path / "binbot"
    subprocess.run([sys.executable, str(BINARY_DIR / "build.py"), str(again)], check=True, timeout=60)
    assert binary_bot.read_bytes() == again.read_bytes(), "the same sources gave different bytes"
    assert os.access(binary_bot, os.X_OK)
    assert binary_bot.read_bytes().startswith(b"#!/usr/bin/env python3\n")
    with zipfile.ZipFile(binary_bot) as zf:
        names = set(zf.namelist())
    wanted = {"__main__.py", "arena/sdk.py", "arena/wire.py", "arena/engine/rules.py"}
    wanted.add("arena/v1/arena_pb2.py")
    assert wanted <= names
    assert not any(n.startswith(("arena/referee", "arena/store", "arena/cli")) for n in names)


def test_binary_bot_imports_its_own_packed_arena(binary_bot: Path, tmp_path: Path) -> None:
    """The zipapp imports the copy of arena packed in it, not the installed package (``--help`` goes
    through the SDK's argparse: exit 0 and a usage text, before any connection)."""
    proc = subprocess.run(
        [str(binary_bot), "--help"],
        capture_output=True,
        text=True,
        timeout=30,
        cwd=tmp_path,
        env={"PATH": f"{Path(sys.executable).parent}:/usr/bin:/bin", "PYTHONVERBOSE": "1"},
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert "--address" in proc.stdout
    imports = [line for line in proc.stderr.splitlines() if line.startswith("import 'arena")]
    assert any("'arena.sdk'" in line for line in imports), imports
    assert all(f'zipimporter object "{binary_bot}' in line for line in imports), imports


def test_registered_node_and_binary_bots_play_a_tournament(
    node_bundle: Path, binary_bot: Path, tmp_path: Path
) -> None:
    home = tmp_path / "arena-home"
    for name, path in (("nodebot", node_bundle), ("binbot", binary_bot), ("greedy", GREEDY)):
        added = arena("bots", "add", name, str(path), home=home)
        assert added.returncode == 0, added.stderr
    listed = arena("bots", "list", home=home)
    assert listed.returncode == 0 and all(n in listed.stdout for n in ("nodebot", "binbot", "greedy"))

    sandbox = [] if bwrap_problem() is None else ["--no-sandbox"]
    args = ["tournament", "run", "nodebot", "binbot", "greedy", "--tables", "2", "--games", "1"]
    run = arena(*args, "--jobs", "2", "--seed", "7", "--move-time", "2", "--bank", "10", *sandbox, home=home)
    assert run.returncode == 0, run.stdout + run.stderr
    assert ("NOT sandboxed" in run.stderr) == bool(sandbox)

    with sqlite3.connect(home / "arena.db") as db:
        matches = db.execute("SELECT id, status, termination, error FROM match").fetchall()
        seats = db.execute(
            "SELECT s.match_id, b.name, s.termination, s.detail, s.decisions FROM matchseat s "
            "JOIN botversion v ON v.id = s.bot_version_id JOIN bot b ON b.id = v.bot_id"
        ).fetchall()
        replays = db.execute("SELECT match_id, data FROM replay").fetchall()
    # 3 pairs x 1 seed x 2 seat rotations
    assert len(matches) == 6
    for match_id, status, termination, error in matches:
        assert status == "finished", (match_id, status, error)
        assert termination in ("normal", "round-cap"), (match_id, termination)
    assert len(seats) == 12
    for match_id, name, termination, detail, decisions in seats:
        assert termination in ("normal", "round-cap"), (match_id, name, termination, detail)
        assert decisions and decisions > 0, (match_id, name)
    assert sorted({name for _, name, *_ in seats}) == ["binbot", "greedy", "nodebot"]
    assert len(replays) == 6
    for _match_id, data in replays:
        replay(zlib.decompress(data).decode())  # every stored replay verifies


def test_node_bundle_is_self_contained(node_bundle: Path) -> None:
    text = node_bundle.read_text()
    assert text.startswith("#!/usr/bin/env node\n")
    assert "ARENA_PROTO_DESCRIPTOR_SET" in text
    assert 'require("@grpc' not in text and "require('@grpc" not in text
    assert os.access(node_bundle, os.X_OK)
