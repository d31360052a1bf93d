"""``arena submit`` against a real ``arena serve``: the first admin and its token from the CLI,
a good bot becomes active (exit 0), a crashing one is rejected with its stderr (exit 3); the
token from ARENA_TOKEN or from the config file."""

from __future__ import annotations

import subprocess
from pathlib import Path

from store.helpers import ARENA, arena_env, run_cli

from .serverkit import CRASH_BOT, GOOD_BOT, ServeProcess


def _submit(home: Path, url: str, env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(ARENA), "submit", *args], env=env, capture_output=True, text=True, timeout=300, cwd=home
    )


def test_submit_waits_for_the_validation_and_prints_it(
    sqlite_url: str, arena_home: Path, tmp_path: Path
) -> None:
    env = arena_env(arena_home, sqlite_url)
    made = subprocess.run(
        [str(ARENA), "users", "add-admin", "admin"],
        input="admin-password-1\n",
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert made.returncode == 0, made.stderr
    token = run_cli(arena_home, sqlite_url, "users", "token", "admin").stdout.strip()
    server = ServeProcess(arena_home, sqlite_url, tmp_path / "serve.log")
    try:
        client_env = {**env, "ARENA_TOKEN": token, "XDG_CONFIG_HOME": str(tmp_path / "no-config")}
        good = _submit(
            arena_home, server.url, client_env, str(GOOD_BOT), "--name", "clibot", "--server", server.url
        )
        assert good.returncode == 0, good.stdout + good.stderr
        assert "clibot version 1: active" in good.stdout
        assert good.stdout.count("validation match ") == 2 and f"{server.url}/bots/clibot" in good.stdout

        # the token (and the server) from the config file instead
        config = tmp_path / "cfg" / "pool-arena" / "config.toml"
        config.parent.mkdir(parents=True)
        config.write_text(f'server = "{server.url}"\ntoken = "{token}"\n', encoding="utf-8")
        file_env = {k: v for k, v in env.items() if k != "ARENA_TOKEN"}
        file_env["XDG_CONFIG_HOME"] = str(tmp_path / "cfg")
        bad = _submit(arena_home, server.url, file_env, str(CRASH_BOT), "--name", "clicrash")
        assert bad.returncode == 3, bad.stdout + bad.stderr
        assert "clicrash version 1: rejected" in bad.stdout and "reason: crashed" in bad.stdout
        assert "| crash_bot: cannot find my weights file" in bad.stdout

        same = _submit(
            arena_home, server.url, client_env, str(GOOD_BOT), "--name", "clibot", "--server", server.url
        )
        assert (
            same.returncode == 1 and "(409)" in same.stderr and "identical to clibot version 1" in same.stderr
        )
        wrong = {**client_env, "ARENA_TOKEN": "arena_wrong"}
        nope = _submit(arena_home, server.url, wrong, str(GOOD_BOT), "--name", "x", "--server", server.url)
        assert nope.returncode == 1 and "(401)" in nope.stderr
        none = _submit(arena_home, server.url, {k: v for k, v in client_env.items() if k != "ARENA_TOKEN"},
                       str(GOOD_BOT), "--name", "x", "--server", server.url)  # fmt: skip
        assert none.returncode == 2 and "no API token" in none.stderr
    finally:
        server.stop()
    assert token not in server.output() and "admin-password-1" not in server.output()
