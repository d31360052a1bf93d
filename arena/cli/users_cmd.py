"""``arena users``: the web accounts of ``arena serve`` -- make the first admin, make API tokens.

A password is read from ``$ARENA_ADMIN_PASSWORD``, else from stdin (one line; asked for without
echo when stdin is a terminal).  Neither a password nor a token is ever logged; a new token is
printed once, on stdout, and only its hash is stored.
"""

from __future__ import annotations

import getpass
import os
import sys
from typing import Annotated

import typer

from .common import database, fail

PASSWORD_ENV = "ARENA_ADMIN_PASSWORD"

app = typer.Typer(help="Web accounts: make the first admin, make API tokens.", no_args_is_help=True)


def _password() -> str:
    from_env = os.environ.get(PASSWORD_ENV)
    if from_env:
        return from_env
    if sys.stdin.isatty():
        first = getpass.getpass("password: ")
        if getpass.getpass("again: ") != first:
            raise fail("the two passwords differ; nothing changed", 2)
        return first
    line = sys.stdin.readline()
    if not line.strip():
        raise fail(f"no password: set {PASSWORD_ENV} or give it on stdin (one line)", 2)
    return line.rstrip("\r\n")


@app.command("add-admin")
def add_admin(name: Annotated[str, typer.Argument(help="the admin's username")]) -> None:
    """Make NAME an admin (a new account, or an existing one promoted and given the password)."""
    from arena.accounts.errors import AccountError
    from arena.accounts.users import add_admin as make_admin

    password = _password()
    with database() as db:
        try:
            user, created = make_admin(db, name, password)
        except AccountError as exc:
            raise fail(str(exc), 2) from None
    what = "made" if created else "promoted (and given the new password)"
    typer.echo(f"admin {user.username} {what}; sign in on the server started by 'arena serve'")


@app.command("token")
def token(
    name: Annotated[str, typer.Argument(help="the user's username")],
    label: Annotated[str, typer.Option("--label", help="what the token is for")] = "cli",
) -> None:
    """Make a personal API token for NAME and print it (once: only its hash is stored)."""
    from arena.accounts.apitokens import new_token
    from arena.accounts.errors import AccountError
    from arena.accounts.users import require_user

    with database() as db:
        try:
            user = require_user(db, name)
        except AccountError as exc:
            raise fail(str(exc), 1) from None
        assert user.id is not None
        raw = new_token(db, user.id, label)
    typer.echo(raw)
    typer.echo(
        f"a token for {user.username}: keep it secret (export ARENA_TOKEN=... or put it in "
        f"~/.config/pool-arena/config.toml); it is not shown again",
        err=True,
    )
