"""Analyses wait in one bounded queue (arena/web/analysis_routes.py): one worker thread runs them
one at a time, at most MAX_WAITING wait at once and at most MAX_PER_ADDRESS for one address; a
request beyond that is a 503 with Retry-After and starts nothing.  An outside review queued a
thread and ~3 s of CPU per anonymous POST, without bound (100 POSTs: 117 threads)."""

from __future__ import annotations

import json
import threading
import urllib.error
import urllib.request
from typing import Any

import pytest

from arena.web import analysis_routes
from arena.web.analysis_routes import MAX_PER_ADDRESS, MAX_WAITING, AnalysisJobs, QueueFull

from .conftest import Site


class Held(AnalysisJobs):
    """Jobs whose analyses wait until released (what they would compute does not matter here)."""

    def __init__(self) -> None:
        super().__init__(db=None)  # type: ignore[arg-type]
        self.release = threading.Event()
        self.analysed: list[Any] = []

    def _analyse(self, key: Any) -> None:
        self.release.wait(30)
        with self.lock:
            self.analysed.append(key)
            self.done[key] = {"key": list(key)}
            self.running.pop(key, None)


def test_the_queue_is_bounded_in_all_and_per_address() -> None:
    jobs = Held()
    keys = [(k, "sha", "value") for k in range(MAX_WAITING + 1)]
    for k in range(MAX_PER_ADDRESS):
        assert jobs.start(keys[k], "10.0.0.1")["status"] == "running"
    with pytest.raises(QueueFull, match="you have"):
        jobs.start(keys[MAX_PER_ADDRESS], "10.0.0.1")
    assert jobs.start(keys[0], "10.0.0.1")["status"] == "running"  # already waiting: no new place
    for k in range(MAX_PER_ADDRESS, MAX_WAITING):
        jobs.start(keys[k], f"10.0.1.{k}")
    with pytest.raises(QueueFull, match="analyses are waiting"):
        jobs.start(keys[MAX_WAITING], "10.0.2.1")
    jobs.release.set()
    for _ in range(600):
        if len(jobs.analysed) == MAX_WAITING:
            break
        threading.Event().wait(0.05)
    assert jobs.analysed == keys[:MAX_WAITING]  # in the order asked, by one worker
    assert jobs.start(keys[MAX_WAITING], "10.0.2.1")["status"] in ("running", "done")  # room again


def test_a_full_queue_answers_503_with_retry_after(site: Site, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(analysis_routes, "MAX_PER_ADDRESS", 0)  # this address may queue nothing
    request = urllib.request.Request(
        f"{site.url}/matches/{site.arena.matches[0]}/analysis", method="POST", data=b""
    )
    with pytest.raises(urllib.error.HTTPError) as info:
        urllib.request.urlopen(request, timeout=60)
    assert info.value.code == 503 and info.value.headers["Retry-After"] == "30"
    body = json.loads(info.value.read())
    assert body["error"] == "Analyses busy" and "try again in 30 s" in body["detail"], body


@pytest.mark.parametrize(
    ("fetch_site", "refused"), [("cross-site", True), ("same-site", True), ("same-origin", False)]
)
def test_a_post_another_site_made_is_refused(site: Site, fetch_site: str, refused: bool) -> None:
    """The POST takes no CSRF token, so a page of another site could queue analyses from its
    visitors' browsers: a browser's ``Sec-Fetch-Site`` saying so is a 403; the viewer's own
    request (same-origin) and clients that send no such header are served."""
    request = urllib.request.Request(
        f"{site.url}/matches/{site.arena.matches[0]}/analysis",
        method="POST",
        data=b"",
        headers={"Sec-Fetch-Site": fetch_site},
    )
    try:
        with urllib.request.urlopen(request, timeout=60) as answer:
            status, body = answer.status, json.loads(answer.read())
    except urllib.error.HTTPError as exc:
        status, body = exc.code, json.loads(exc.read())
    if refused:
        assert status == 403 and body["error"] == "Cross-site request", (status, body)
    else:
        assert status in (200, 202) and body["status"] in ("running", "done", "error"), (status, body)
