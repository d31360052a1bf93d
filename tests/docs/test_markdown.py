"""The Markdown reader behind the rules page and the link checks: GitHub's heading anchors, the
links it finds, and the server-side rendering of docs/rules.md."""

from __future__ import annotations

from pathlib import Path

import pytest

from arena.web.markdown import anchors, links, render, slugify
from arena.web.rulespage import BOARD_URL, RulesMissingError, rules_html

from .rulesdoc_helpers import RULES


@pytest.mark.parametrize(
    ("heading", "slug"),
    [
        ("5. The dice stream", "5-the-dice-stream"),
        ("6.4 The game record", "64-the-game-record"),
        ("1.4 The lifeguard's track", "14-the-lifeguards-track"),
        ("Writing a bot: `arena match`", "writing-a-bot-arena-match"),
        ("Cool am Pool: the rules, for bot authors", "cool-am-pool-the-rules-for-bot-authors"),
        ("R10–R14 and snake_case", "r10r14-and-snake_case"),
    ],
)
def test_slugs_are_githubs(heading: str, slug: str) -> None:
    assert slugify(heading) == slug


def test_anchors_and_links() -> None:
    text = (
        "# Title\n\n## Part\n\n## Part\n\n"
        '- <a id="r7"></a>**R7** see [the part](#part-1) and ![pic](board.svg)\n\n'
        "`[not](a-link.md)`\n\n```\n[nor](this.md)\n```\n"
    )
    assert anchors(text) == {"title", "part", "part-1", "r7"}
    assert [(k.target, k.image) for k in links(text)] == [("#part-1", False), ("board.svg", True)]


def test_render_gives_ids_rewrites_links_and_wraps_tables() -> None:
    text = "## 2. Seats\n\n[proto](../proto/README.md) [here](#2-seats) ![b](board.svg)\n\n"
    text += "| a |\n|---|\n| 1 |\n"
    html = render(text, lambda target, image: "/x.svg" if image else (target if target[0] == "#" else None))
    assert '<h2 id="2-seats">' in html
    assert '<span class="repo-path">proto</span>' in html and "../proto" not in html
    assert '<a href="#2-seats">here</a>' in html and 'src="/x.svg"' in html
    assert '<div class="table-scroll"><table>' in html and "</table></div>" in html


def test_the_rules_page_html() -> None:
    html = rules_html(RULES)
    for k in range(1, 29):
        assert f'<a id="r{k}"></a><strong>R{k}' in html
    assert f'src="{BOARD_URL}"' in html and 'id="5-the-dice-stream"' in html
    assert html.count("<table>") >= 8  # faces, loungers, track, actions, vectors, the record
    assert 'href="../' not in html


def test_a_missing_rules_file_says_what_to_do(tmp_path: Path) -> None:
    with pytest.raises(RulesMissingError, match="source checkout"):
        rules_html(tmp_path / "rules.md")
