"""The HTTP API's reference page (``/api/docs``), rendered here from the app's OpenAPI schema.

FastAPI's own page loads Swagger UI's script and styles from a CDN: offline, or on a network that
blocks it, it was a blank page.  This one is plain HTML from this process: every route with its
method, summary, parameters, request body and responses, and a link to the schema itself
(``/api/openapi.json``) for tools.
"""

from __future__ import annotations

from html import escape
from typing import Any

METHODS = ("get", "post", "put", "patch", "delete")


def _schema_name(schema: dict[str, Any]) -> str:
    if "$ref" in schema:
        return str(schema["$ref"]).rsplit("/", 1)[-1]
    if "anyOf" in schema:
        return " | ".join(_schema_name(s) for s in schema["anyOf"])
    if schema.get("type") == "array":
        return f"array of {_schema_name(schema.get('items', {}))}"
    return str(schema.get("type", "any"))


def _parameters(op: dict[str, Any]) -> str:
    rows = []
    for p in op.get("parameters", []):
        required = "required" if p.get("required") else "optional"
        doc = p.get("description") or p.get("schema", {}).get("description", "")
        rows.append(
            f"<tr><td><code>{escape(str(p.get('name')))}</code></td><td>{escape(str(p.get('in')))}</td>"
            f"<td>{escape(_schema_name(p.get('schema', {})))}</td><td>{required}</td>"
            f"<td>{escape(str(doc))}</td></tr>"
        )
    if not rows:
        return ""
    head = "<tr><th>parameter</th><th>in</th><th>type</th><th></th><th></th></tr>"
    return f"<table>{head}{''.join(rows)}</table>"


def _body(op: dict[str, Any]) -> str:
    body = op.get("requestBody")
    if not body:
        return ""
    kinds = ", ".join(
        f"<code>{escape(kind)}</code> ({escape(_schema_name(c.get('schema', {})))})"
        for kind, c in body.get("content", {}).items()
    )
    return f"<p>Request body{' (required)' if body.get('required') else ''}: {kinds}</p>"


def _responses(op: dict[str, Any]) -> str:
    items = [
        f"<code>{escape(str(code))}</code> {escape(str(r.get('description', '')))}"
        for code, r in op.get("responses", {}).items()
    ]
    return f"<p>Responses: {'; '.join(items)}</p>" if items else ""


def api_docs_html(schema: dict[str, Any]) -> str:
    """The reference page of ``schema`` (an OpenAPI document): one section per route and method,
    in the schema's order; self-contained (no script, no outside resource)."""
    info = schema.get("info", {})
    title = escape(str(info.get("title", "API")))
    sections = []
    for path, item in schema.get("paths", {}).items():
        for method in METHODS:
            op = item.get(method)
            if op is None:
                continue
            summary = escape(str(op.get("summary", "")))
            description = escape(str(op.get("description", ""))).replace("\n\n", "</p><p>")
            sections.append(
                f'<section><h2><span class="m">{method.upper()}</span> <code>{escape(path)}</code></h2>'
                f"<p><b>{summary}</b></p><p>{description}</p>"
                f"{_parameters(op)}{_body(op)}{_responses(op)}</section>"
            )
    return (
        "<!doctype html><html lang=en><head><meta charset=utf-8>"
        f"<title>{title}: HTTP API</title><style>"
        "body{font-family:sans-serif;max-width:60rem;margin:2rem auto;padding:0 1rem;line-height:1.4}"
        "section{border-top:1px solid #ccc;padding:.5rem 0}h2{font-size:1.05rem}"
        ".m{display:inline-block;min-width:4rem;color:#fff;background:#357;padding:0 .3rem}"
        "table{border-collapse:collapse}td,th{border:1px solid #ddd;padding:.15rem .4rem;text-align:left}"
        "</style></head><body>"
        f"<h1>{title}: HTTP API</h1><p>{escape(str(info.get('description', '')))}</p>"
        '<p>The machine-readable schema: <a href="/api/openapi.json">/api/openapi.json</a> (OpenAPI '
        f"{escape(str(schema.get('openapi', '')))}).</p>{''.join(sections)}</body></html>"
    )
