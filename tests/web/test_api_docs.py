"""``/api/docs`` is the HTTP API's reference, served whole by the arena: FastAPI's page loaded
Swagger UI from a CDN and was blank offline (this machine has no internet).  The page names
every API route of the schema and links the schema; it loads nothing from anywhere."""

from __future__ import annotations

import json
import re
import urllib.request

from .conftest import Site


def _get(url: str) -> tuple[str, str]:
    with urllib.request.urlopen(url, timeout=30) as r:
        return r.headers.get("content-type", ""), r.read().decode("utf-8")


def test_the_api_reference_is_self_contained_and_complete(site: Site) -> None:
    kind, page = _get(f"{site.url}/api/docs")
    assert kind.startswith("text/html")
    assert "<script" not in page and not re.search(r"""(src|href)=["']?(https?:)?//""", page), page[:500]
    _, text = _get(f"{site.url}/api/openapi.json")
    schema = json.loads(text)
    assert "/api/docs" not in schema["paths"]  # the page itself is not an API route
    routes = [(m.upper(), p) for p, item in schema["paths"].items() for m in item if m in ("get", "post")]
    assert len(routes) >= 5, routes
    for method, path in routes:
        assert f'<span class="m">{method}</span> <code>{path}</code>' in page, (method, path)
    assert 'href="/api/openapi.json"' in page
