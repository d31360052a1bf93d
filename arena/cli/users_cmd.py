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
    """The password from the environment or stdin, refused (status 2, nothing changed) when it is
    missing or not UTF-8 text (a byte such as 0xff: it said "'utf-8' codec can't encode")."""
    try:
        password = _read_password()
        password.encode("utf-8")
    except (UnicodeEncodeError, UnicodeDecodeError):
        raise fail(
            "the password is not UTF-8 text (it holds a byte such as 0xff); nothing changed", 2
        ) from None
    return password


def _read_password() -> str:
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
def add_admin(
    name: Annotated[str, typer.Argument(metavar="NAME", help="the admin's username")],
    promote: Annotated[
        bool, typer.Option("--promote", help="make an existing (signed-up) account an admin")
    ] = False,
) -> None:
    """Make NAME an admin: a new account, or an existing one given the password.  An existing
    non-admin account is promoted only with --promote; an existing account's sessions all end
    and its API tokens are revoked (whoever held them holds nothing after)."""
    from arena.accounts.errors import AccountError
    from arena.accounts.users import add_admin as make_admin
    from arena.accounts.users import find_user

    with database() as db:
        existing = find_user(db, name)
        if existing is not None and not existing.is_admin and not promote:
            raise fail(
                f"{existing.username!r} is an existing account that is not an admin (anyone may have "
                "signed up with that name): check who it is, then run again with --promote, or choose "
                "another name; nothing changed",
                2,
            )
        password = _password()
        try:
            made = make_admin(db, name, password, promote=promote)
        except AccountError as exc:
            raise fail(str(exc), 2) from None
    if made.created:
        typer.echo(f"admin {made.user.username} made; sign in on the server started by 'arena serve'")
        return
    what = (
        "promoted and given the new password"
        if existing and not existing.is_admin
        else "given the new password"
    )
    typer.echo(
        f"admin {made.user.username} {what}; ended {made.sessions_ended} sign-in session(s) and revoked "
        f"{made.tokens_revoked} API token(s) of the account; sign in again on the server"
    )


@app.command("token")
def token(
    name: Annotated[str, typer.Argument(metavar="NAME", help="the user's username")],
    label: Annotated[str, typer.Option("--label", help="what the token is for")] = "cli",
) -> None:
    """Make a personal API token for NAME and print it (once: only its hash is stored)."""
    from arena.accounts.apitokens import new_token
    from arena.accounts.errors import AccountError
    from arena.accounts.users import require_user

    from .closed_output import replaced_at_start

    if replaced_at_start(1):  # /dev/null in its place: the token would be made, and lost
        raise fail("stdout is closed (or not writable), and the token is shown there, once; nothing made", 2)
    with database() as db:
        try:
            user = require_user(db, name)
        except AccountError as exc:
            raise fail(str(exc), 1) from None
        assert user.id is not None
        try:
            raw = new_token(db, user.id, label)
        except AccountError as exc:  # too many tokens
            raise fail(str(exc), 1) from None
    typer.echo(raw)
    typer.echo(
        f"a token for {user.username}: keep it secret (export ARENA_TOKEN=... or put it in "
        f"~/.config/pool-arena/config.toml); it is not shown again",
        err=True,
    )
