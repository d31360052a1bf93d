"""Numbers in URLs and headers are read strictly (arena.safetext.small_int): a superscript or
another script's digit ("²", "٣"), which ``str.isdigit`` accepts and ``int`` refuses, and a
number of thousands of digits, which ``int`` refuses and no database column holds, are a 400 with
the page's usual message, never an internal error (an outside review found 500s from both)."""

from __future__ import annotations

import urllib.error
import urllib.parse
import urllib.request

import pytest
from hypothesis import given
from hypothesis import strategies as st

from arena.safetext import small_int

from .conftest import Site


@given(st.text(max_size=30))
def test_small_int_reads_only_ascii_digits_that_fit(text: str) -> None:
    value = small_int(text)
    if value is None:
        assert not (text.isascii() and text.isdigit() and len(text) <= 18)
    else:
        assert text.isascii() and text.isdigit() and len(text) <= 18 and value == int(text)
        assert 0 <= value < 2**63


@pytest.mark.parametrize("text", ["²", "٣", "1²", " 7", "7 ", "+7", "-7", "", "9" * 19, "9" * 5000, "1_000"])
def test_small_int_refuses(text: str) -> None:
    assert small_int(text) is None


def test_small_int_reads() -> None:
    assert small_int("0") == 0 and small_int("007") == 7 and small_int("9" * 18) == 10**18 - 1


def _status(url: str) -> tuple[int, str]:
    try:
        with urllib.request.urlopen(url, timeout=60) as answer:
            return answer.status, answer.read().decode()
    except urllib.error.HTTPError as exc:
        return exc.code, exc.read().decode()


@pytest.mark.parametrize("version", ["²", "٣", "9" * 5000, "9" * 30])
@pytest.mark.parametrize("path", ["/matches?bot=", "/api/matches?bot="])
def test_a_bot_version_that_is_not_a_small_number_is_a_400(site: Site, path: str, version: str) -> None:
    status, body = _status(site.url + path + urllib.parse.quote(f"greedy@{version}"))
    assert status == 400, (status, body[:300])
    assert "bad version" in body and "NAME@N" in body, body[:300]


@pytest.mark.parametrize("path", ["/matches?bot=", "/api/matches?bot="])
def test_an_unknown_bot_filter_names_the_bot_without_cli_advice(site: Site, path: str) -> None:
    """A web page's reader cannot run ``arena`` commands on the server: an unknown bot in the filter
    is a 400 that names it (``FilterError.fact``), and only the CLI adds "see 'arena bots list'"."""
    status, body = _status(site.url + path + "nosuch")
    assert status == 400, (status, body[:300])
    assert "no bot" in body and "nosuch" in body, body[:300]
    assert "arena bots" not in body and "see " not in body, body[:300]
