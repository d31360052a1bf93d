"""``arena submit`` against a real ``arena serve``: the first admin and its token from the CLI,
a good bot becomes active (exit 0), a crashing one is rejected with its stderr (exit 3); the
token from ARENA_TOKEN or from the config file."""

from __future__ import annotations

import socket
import subprocess
from pathlib import Path

import pytest
from store.helpers import ARENA, arena_env, run_cli

from .serverkit import CRASH_BOT, GOOD_BOT, ServeProcess


def _submit(home: Path, url: str, env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(ARENA), "submit", *args], env=env, capture_output=True, text=True, timeout=300, cwd=home
    )


def _admin(arena_home: Path, sqlite_url: str) -> tuple[dict[str, str], str]:
    """The CLI's environment and an API token of a new admin (``arena users add-admin``)."""
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
    return env, run_cli(arena_home, sqlite_url, "users", "token", "admin").stdout.strip()


def test_submit_waits_for_the_validation_and_prints_it(
    sqlite_url: str, arena_home: Path, tmp_path: Path
) -> None:
    env, token = _admin(arena_home, sqlite_url)
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


def _client_env(arena_home: Path, sqlite_url: str, tmp_path: Path, token: str) -> dict[str, str]:
    env = arena_env(arena_home, sqlite_url)
    env.pop("ARENA_MAX_UPLOAD_MB", None)
    return {**env, "ARENA_TOKEN": token, "XDG_CONFIG_HOME": str(tmp_path / "no-config")}


def test_submit_refuses_bad_usage_before_any_network_call(
    sqlite_url: str, arena_home: Path, tmp_path: Path
) -> None:
    listener = socket.create_server(("127.0.0.1", 0))
    listener.setblocking(False)
    url = f"http://127.0.0.1:{listener.getsockname()[1]}"
    env = _client_env(arena_home, sqlite_url, tmp_path, "arena_whatever")
    big = tmp_path / "big.sh"
    big.write_bytes(b"#!/bin/sh\n" + b"#" * 6_000_000)
    rule = "use 1-64 letters, digits, '_', '.' or '-' (first a letter or digit)"
    good, no_scheme, bad_port = str(GOOD_BOT), url.removeprefix("http://"), url.rsplit(":", 1)[0] + ":abc"
    ok = "arena_whatever"
    cases: list[tuple[tuple[str, ...], str, int, str]] = [
        *[((good, "--name", n, "--server", url), ok, 2, f"error: bad bot name {n!r}: {rule}")
          for n in ("bad name", "é", "a/b", "x?y", "../up", "")],
        ((".", "--name", "x", "--server", url), ok, 2, "error: . is a folder: give the bot's file"),
        ((good, "--name", "x", "--server", no_scheme), ok, 2,
         f"error: bad server URL '{no_scheme}': add http:// or https://"),
        ((str(big), "--name", "x", "--server", url), ok, 1,
         f"error: {big}: the upload is 6.00 MB, over the 5 MB limit: nothing was sent"),
        # what the client cannot even send: one error line too (exit 1), never a traceback
        ((good, "--name", "x", "--server", bad_port), ok, 1, "error: cannot send the request"),
        ((good, "--name", "x", "--server", url), "arena_x\nX-Evil: y", 1, "error: cannot send the request"),
    ]  # fmt: skip
    try:
        for args, token, code, message in cases:
            done = _submit(arena_home, url, {**env, "ARENA_TOKEN": token}, *args)
            assert done.returncode == code, (args, done.stdout, done.stderr)
            assert done.stderr.startswith(message) and done.stderr.count("\n") == 1, (args, done.stderr)
            assert "Traceback" not in done.stderr and not done.stdout
        with pytest.raises(BlockingIOError):
            listener.accept()  # nobody ever connected
    finally:
        listener.close()


def test_submit_reports_a_server_that_refuses_the_size_or_breaks_off(
    sqlite_url: str, arena_home: Path, tmp_path: Path
) -> None:
    _env, token = _admin(arena_home, sqlite_url)
    # the server allows 10 kB, the client checks the default 5 MB: the server answers 413 before
    # it reads the body, and closes the connection while the client is still sending
    server = ServeProcess(arena_home, sqlite_url, tmp_path / "serve.log", ARENA_MAX_UPLOAD_MB="0.01")
    try:
        client_env = _client_env(arena_home, sqlite_url, tmp_path, token)
        big = tmp_path / "big.sh"
        big.write_bytes(b"#!/bin/sh\n" + b"#" * 4_000_000)
        done = _submit(
            arena_home, server.url, client_env, str(big), "--name", "bigbot", "--server", server.url
        )
        assert done.returncode == 1, done.stdout + done.stderr
        assert "Traceback" not in done.stderr and done.stderr.count("\n") == 1, done.stderr
        assert done.stderr.startswith(
            (
                "error: the server refused it (413): the upload is 4.00 MB, over the 0.01 MB limit",
                f"error: the server {server.url}/api/bots/bigbot/versions closed the connection during "
                f"the upload",
            )
        ), done.stderr
        assert "Broken pipe" not in done.stderr or "size limit" in done.stderr
        # a small file over its limit: read in full, refused by the route (413 too)
        mid = tmp_path / "mid.sh"
        mid.write_bytes(b"#!/bin/sh\n" + b"#" * 20_000)
        late = _submit(
            arena_home, server.url, client_env, str(mid), "--name", "midbot", "--server", server.url
        )
        assert late.returncode == 1 and "(413)" in late.stderr and "over the 0.01 MB" in late.stderr, (
            late.stderr
        )
    finally:
        server.stop()


@pytest.mark.parametrize("locale", [{}, {"LC_ALL": "C", "PYTHONUTF8": "0", "PYTHONCOERCECLOCALE": "0"}])
def test_a_password_that_is_not_utf8_is_refused_in_one_line(
    sqlite_url: str, arena_home: Path, locale: dict[str, str]
) -> None:
    """A byte such as 0xff in the password on stdin: one line saying what is wrong, status 2,
    and no account made (it said "'utf-8' codec can't encode character '\\udcff'", status 1)."""
    env = {**arena_env(arena_home, sqlite_url), **locale}
    made = subprocess.run(
        [str(ARENA), "users", "add-admin", "bob"],
        input=b"pass\xffword12\n",
        env=env,
        capture_output=True,
        timeout=120,
    )
    said = made.stderr.decode("utf-8", "replace")
    assert made.returncode == 2, said
    assert "the password is not UTF-8 text" in said and "Traceback" not in said
    listed = run_cli(arena_home, sqlite_url, "users", "token", "bob", code=None)
    assert listed.returncode != 0  # no account 'bob'
