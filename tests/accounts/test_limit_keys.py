"""The sign-in limits' keys: a sign-in's name is counted under the user it names, and never
under a key of another kind.  Sign-ups are counted per address under ``signup:ADDRESS``; a
sign-in's name was counted as typed, so failed sign-ins as ``signup:203.0.113.9`` (from
anywhere) used up that address's sign-ups."""

from __future__ import annotations

from arena.accounts.ratelimit import Limits, RateLimiter
from arena.serve.webapp import serve_app
from arena.store.db import Database
from arena.web.auth_routes import Accounts

from .test_ipv6_limits import _post

PW = "a good long password"


def test_failed_sign_ins_cannot_use_up_an_address_s_sign_ups(db: Database) -> None:
    per_user = RateLimiter(3, 1 / 600)  # the ceiling per user over all addresses (3 here)
    limits = Limits(
        RateLimiter(10, 1), RateLimiter(10, 1), per_user, RateLimiter(100, 1), RateLimiter(100, 1)
    )
    app = serve_app(db, Accounts(db, limits=limits))
    form = {"password": "wrong password", "csrf_token": "forms-token"}
    for n in range(5):  # from five other addresses
        _post(app, "/login", {"username": "signup:203.0.113.9", **form}, f"198.51.100.{n + 1}")
    signup = {"username": "newbie", "password": PW, "password2": PW, "csrf_token": "forms-token"}
    assert _post(app, "/signup", signup, "203.0.113.9") == 303  # made, signed in
