"""``arena.web.problems``: the one shape of a refused request.  The routes' exception handlers and
the upload guard in front of the app (which answers before any handler exists) both answer
through it; the integration tests of each (tests/accounts/test_web_security.py) cover the wiring,
these the shapes themselves."""

from __future__ import annotations

import json

from fastapi import FastAPI, Request

from arena.accounts.ratelimit import RateLimited
from arena.web.app import make_templates
from arena.web.problems import problem, problem_json, sign_in_first, too_many


def _request(path: str) -> Request:
    scope = {
        "type": "http",
        "method": "POST",
        "path": path,
        "raw_path": path.encode(),
        "query_string": b"",
        "headers": [(b"host", b"arena.test")],
        "scheme": "http",
        "server": ("arena.test", 80),
        "root_path": "",
        "app": FastAPI(),  # the templates' url_for asks the request for its app
    }
    return Request(scope)


def test_the_json_refusal_has_exactly_error_detail_and_status() -> None:
    answer = problem_json(418, "Teapot", "short and stout", {"Retry-After": "3"})
    assert answer.status_code == 418
    assert json.loads(answer.body) == {"error": "Teapot", "detail": "short and stout", "status": 418}
    assert answer.headers["retry-after"] == "3" and answer.headers["content-type"] == "application/json"


def test_a_rate_limit_is_json_with_retry_after_for_the_api_and_the_error_page_elsewhere() -> None:
    limited = RateLimited("uploads", 2.2)
    api = too_many(make_templates(), _request("/api/bots/x/versions"), limited)
    assert api.status_code == 429 and api.headers["retry-after"] == "3"
    assert json.loads(api.body) == {"error": "Too many requests", "detail": str(limited), "status": 429}
    page = too_many(make_templates(), _request("/submit"), limited)
    assert page.status_code == 429 and page.headers["retry-after"] == "3"
    text = bytes(page.body).decode()
    assert page.headers["content-type"].startswith("text/html")
    assert "Too many requests" in text and "too many uploads: try again in 3 s" in text


def test_sign_in_first_is_a_401_for_the_api_and_the_sign_in_page_that_comes_back_elsewhere() -> None:
    api = sign_in_first(_request("/api/bots/x/versions"), "/api/bots/x/versions")
    assert api.status_code == 401
    assert json.loads(api.body) == {"error": "Unauthorized", "detail": "sign in first", "status": 401}
    page = sign_in_first(_request("/bots/my bot/upload"), "/bots/my bot/upload")
    assert page.status_code == 303 and page.headers["location"] == "/login?next=/bots/my%20bot/upload"


def test_the_error_page_lists_its_links_and_escapes_its_text() -> None:
    links = ("/play/abc", "/play/def")
    page = problem(
        make_templates(), _request("/play"), 429, "Busy", "<b>two</b> games", api=False, links=links
    )
    text = bytes(page.body).decode()
    assert 'href="/play/abc"' in text and 'href="/play/def"' in text
    assert "&lt;b&gt;two&lt;/b&gt; games" in text and "<b>two</b>" not in text
