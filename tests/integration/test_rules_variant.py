"""A rules variant end to end through the referee: the Welcome names the match's rules version,
the SDK hands the bot the rules (``self.rules`` and ``state.rules``), the record header names
them and the record verifies under them; ``arena match --rules`` chooses them."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

from arena.engine import replay
from arena.engine.variants import SPRINT, STANDARD
from arena.referee import MatchResult, TimeControl
from arena.v1 import arena_pb2 as pb

from .helpers import open_play, play_stream
from .test_auth import serving
from .test_cli_match import arena

RULES_BOT = Path(__file__).with_name("rules_bot.py")


def _play(rules: object) -> tuple[MatchResult, list[list[pb.RefereeMessage]]]:
    async def main() -> tuple[MatchResult, list[list[pb.RefereeMessage]]]:
        async with serving() as (server, channel):
            sessions = [server.session(name) for name in ("north", "south")]
            kwargs = {} if rules is None else {"rules": rules}
            match = asyncio.create_task(
                server.play(sessions, 21, TimeControl(unlimited=True), match_id="variant", **kwargs)
            )
            streams = await asyncio.gather(*(play_stream(open_play(channel, s.token)) for s in sessions))
            return await asyncio.wait_for(match, 60), list(streams)

    return asyncio.run(main())


def test_welcome_and_record_name_the_variant() -> None:
    result, streams = _play(SPRINT)
    assert result.forfeits == ()
    assert [s[0].welcome.rules_version for s in streams] == ["sprint-1", "sprint-1"]
    assert json.loads(result.replay.split("\n", 1)[0])["rules"] == "sprint-1"
    rep = replay(result.replay)
    assert rep.rules is SPRINT and rep.final.is_over
    if rep.final.termination == "normal":
        assert rep.final.unoccupied <= SPRINT.end_unoccupied


def test_without_a_choice_matches_use_the_standard_rules() -> None:
    result, streams = _play(None)
    assert [s[0].welcome.rules_version for s in streams] == ["1", "1"]
    assert replay(result.replay).rules is STANDARD


def test_arena_match_rules_reach_the_sdk_bot(tmp_path: Path) -> None:
    out, logs = tmp_path / "sprint.jsonl", tmp_path / "logs"
    args = ["match", str(RULES_BOT), "greedy", "--seed", "8", "--rules", "sprint", "--no-record"]
    proc = arena(*args, "--out", str(out), "--logs", str(logs), "--bank", "30", cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert "rules sprint (sprint-1)" in proc.stderr
    (log,) = logs.glob("*rules_bot.stderr.log")
    assert "rules-seen bot=sprint-1 state=sprint-1 end=10 welcome=sprint-1" in log.read_text()
    assert replay(out.read_text(encoding="utf-8")).rules is SPRINT
    verify = arena("engine", "verify", str(out), cwd=tmp_path)
    assert verify.returncode == 0 and "under rules sprint-1 (sprint)" in verify.stdout


def test_arena_match_refuses_an_unknown_variant(tmp_path: Path) -> None:
    proc = arena("match", "greedy", "random", "--rules", "blitz", "--no-record", cwd=tmp_path)
    assert proc.returncode == 2
    assert "unknown rules 'blitz'" in proc.stderr and "sprint" in proc.stderr


def test_a_tournament_with_the_variant_runs_end_to_end_and_its_replays_verify(tmp_path: Path) -> None:
    env = {"ARENA_HOME": str(tmp_path / "home")}
    args = ["tournament", "run", "greedy", "random", "invader", "--games", "1", "--seed", "4"]
    run = arena(*args, "--rules", "sprint", "--jobs", "1", cwd=tmp_path, env=env)
    assert run.returncode == 0, run.stderr
    show = arena("tournament", "show", "1", cwd=tmp_path, env=env)
    assert show.returncode == 0 and "rules sprint (sprint-1)" in show.stdout, show.stdout
    verify = arena("replays", "verify", "--all", "--tournament", "1", cwd=tmp_path, env=env)
    assert verify.returncode == 0 and "verified 6 replays: 6 OK" in verify.stdout + verify.stderr
    for match_id in range(1, 7):
        record = arena("replays", "export", str(match_id), cwd=tmp_path, env=env)
        assert record.returncode == 0, record.stderr
        assert json.loads(record.stdout.split("\n", 1)[0])["rules"] == "sprint-1"
        assert replay(record.stdout).rules is SPRINT


def test_tournament_create_refuses_an_unknown_variant(tmp_path: Path) -> None:
    env = {"ARENA_HOME": str(tmp_path / "home")}
    proc = arena("tournament", "create", "greedy", "random", "--rules", "blitz", cwd=tmp_path, env=env)
    assert proc.returncode == 2 and "unknown rules 'blitz'" in proc.stderr
