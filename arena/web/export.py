"""The replay viewer as ONE self-contained HTML file: inline CSS, JavaScript and data."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Final

from jinja2 import Environment, FileSystemLoader, select_autoescape

HERE: Final = Path(__file__).resolve().parent
TEMPLATES: Final = HERE / "templates"
STATIC: Final = HERE / "static"


def json_for_script(data: Any) -> str:
    """JSON safe inside ``<script type="application/json">``: no ``</script>`` or ``<!--`` breakout."""
    text = json.dumps(data, separators=(",", ":"), ensure_ascii=False)
    return text.replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026")


def static_text(name: str) -> str:
    """A file of the package's static folder as text."""
    return (STATIC / name).read_text(encoding="utf-8")


def environment() -> Environment:
    """A Jinja2 environment over the package's templates (HTML autoescaped)."""
    return Environment(loader=FileSystemLoader(str(TEMPLATES)), autoescape=select_autoescape(["html"]))


def standalone_html(view: dict[str, Any], title: str) -> str:
    """The viewer for ``view`` (see :func:`arena.web.viewdata.build_view`) as one HTML page that
    works from a file, offline, without the server."""
    template = environment().get_template("standalone.html")
    return template.render(
        title=title,
        css=static_text("style.css") + "\n" + static_text("viewer.css"),
        js=static_text("viewer.js").replace("</", "<\\/"),
        data_json=json_for_script(view),
        view=view,
        match=view.get("match"),
        seating=view.get("seating", []),
        result=view.get("result", {}),
    )
