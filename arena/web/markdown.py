"""The project's Markdown, read the way GitHub reads it: links, heading anchors, and HTML.

One parser (markdown-it-py, CommonMark plus tables, raw HTML allowed) serves two purposes:

* the web app renders ``docs/rules.md`` as its rules page (:func:`render`), with every heading
  given the same ``id`` GitHub gives it, so ``rules.md#5-the-dice-stream`` works in both places;
* the documentation tests list every link of a Markdown file (:func:`links`) and every anchor a
  file defines (:func:`anchors`) to check that nothing points outside the repository.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from html.parser import HTMLParser
from typing import Final

from markdown_it import MarkdownIt
from markdown_it.token import Token

_NOT_SLUG: Final = re.compile(r"[^\w\- ]", re.UNICODE)


def slugify(text: str) -> str:
    """GitHub's anchor for a heading with the plain text ``text``: lower case, punctuation other
    than ``-`` and ``_`` dropped, each space a ``-`` (``"5. The dice stream"`` ->
    ``"5-the-dice-stream"``)."""
    return _NOT_SLUG.sub("", text.strip().lower()).replace(" ", "-")


def parser() -> MarkdownIt:
    """CommonMark with tables and raw HTML (what GitHub renders for these files)."""
    return MarkdownIt("commonmark", {"html": True}).enable("table")


def _plain(inline: Token) -> str:
    """The visible text of an inline token (code spans and link texts included, HTML dropped)."""
    parts = []
    for child in inline.children or []:
        if child.type in ("text", "code_inline"):
            parts.append(child.content)
        elif child.type in ("softbreak", "hardbreak"):
            parts.append(" ")
    return "".join(parts)


class _HtmlRefs(HTMLParser):
    """Collects ``id``/``name`` anchors and ``href``/``src`` targets from raw HTML."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.ids: list[str] = []
        self.targets: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        for key, value in attrs:
            if value is None:
                continue
            if key == "id" or (key == "name" and tag == "a"):
                self.ids.append(value)
            elif key in ("href", "src"):
                self.targets.append(value)


def _html_refs(html: str) -> _HtmlRefs:
    refs = _HtmlRefs()
    refs.feed(html)
    refs.close()
    return refs


def _walk(tokens: list[Token]) -> list[Token]:
    out: list[Token] = []
    for t in tokens:
        out.append(t)
        if t.children:
            out.extend(_walk(t.children))
    return out


def _heading_ids(tokens: list[Token]) -> dict[int, str]:
    """Token index of every ``heading_open`` -> its GitHub anchor (duplicates get -1, -2, ...)."""
    seen: dict[str, int] = {}
    out: dict[int, str] = {}
    for i, t in enumerate(tokens):
        if t.type != "heading_open":
            continue
        base = slugify(_plain(tokens[i + 1]))
        n = seen.get(base, 0)
        seen[base] = n + 1
        out[i] = base if n == 0 else f"{base}-{n}"
    return out


def anchors(text: str) -> set[str]:
    """Every anchor a Markdown document defines: its headings' GitHub ids and the ``id``/``name``
    attributes of raw HTML in it."""
    tokens = parser().parse(text)
    found = set(_heading_ids(tokens).values())
    for t in _walk(tokens):
        if t.type in ("html_block", "html_inline"):
            found.update(_html_refs(t.content).ids)
    return found


@dataclass(frozen=True)
class Link:
    """A link or image target in a Markdown document, with the (1-based) line it starts on."""

    target: str
    line: int
    image: bool = False


def links(text: str) -> list[Link]:
    """Every link and image target of a Markdown document (Markdown syntax and raw HTML), in
    order; text inside code spans and code blocks is not a link."""
    out: list[Link] = []
    line = 0
    for t in _walk(parser().parse(text)):
        if t.map is not None:
            line = t.map[0] + 1
        if t.type == "link_open":
            out.append(Link(str(t.attrGet("href") or ""), line))
        elif t.type == "image":
            out.append(Link(str(t.attrGet("src") or ""), line, image=True))
        elif t.type in ("html_block", "html_inline"):
            out.extend(Link(target, line) for target in _html_refs(t.content).targets)
    return out


def render(text: str, rewrite: Callable[[str, bool], str | None] | None = None) -> str:
    """``text`` as HTML: headings carry their GitHub ids, tables are wrapped in a
    ``<div class="table-scroll">`` (so a narrow screen scrolls the table, not the page).

    ``rewrite(target, is_image)`` may change each link or image target; returning ``None`` turns
    a link into plain text (its content is kept) and drops an image's ``src``.
    """
    md = parser()
    tokens = md.parse(text)
    for index, slug in _heading_ids(tokens).items():
        tokens[index].attrSet("id", slug)
    if rewrite is not None:
        for t in _walk(tokens):
            if t.type == "link_open":
                target = rewrite(str(t.attrGet("href") or ""), False)
                if target is None:
                    t.tag, t.attrs = "span", {"class": "repo-path"}
                else:
                    t.attrSet("href", target)
            elif t.type == "image":
                target = rewrite(str(t.attrGet("src") or ""), True)
                t.attrSet("src", target or "")
        _close_spans(tokens)
    html = str(md.renderer.render(tokens, md.options, {}))
    return html.replace("<table>", '<div class="table-scroll"><table>').replace("</table>", "</table></div>")


def _close_spans(tokens: list[Token]) -> None:
    """A link turned into a ``<span>`` must close with ``</span>``: pair opens and closes."""
    for t in tokens:
        if not t.children:
            continue
        stack: list[Token] = []
        for child in t.children:
            if child.type == "link_open":
                stack.append(child)
            elif child.type == "link_close" and stack:
                child.tag = stack.pop().tag


__all__ = ["Link", "anchors", "links", "parser", "render", "slugify"]
