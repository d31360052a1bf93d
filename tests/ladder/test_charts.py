"""The charts (arena/web/charts.py): valid SVG that escapes names, drawn 400 units wide with
text of at least 11 units (readable at 400 px), one mark per datum, "no data yet" when empty;
and the bot charts page over a real ladder database (arena/web/ladder_routes.py)."""

from __future__ import annotations

import xml.etree.ElementTree as ET

import pytest

from arena.web.charts import bar_chart, histogram, matrix_chart, rating_chart

SVG = "{http://www.w3.org/2000/svg}"


def _parse(svg: str) -> ET.Element:
    root = ET.fromstring(svg)
    assert root.tag == f"{SVG}svg"
    assert root.get("viewBox", "").split()[2] == "400" and root.get("width") == "100%"
    assert int(root.get("font-size", "0")) >= 11
    assert root.find(f"{SVG}title") is not None
    return root


def test_rating_chart_has_a_band_a_line_and_the_conservative_line() -> None:
    root = _parse(rating_chart([1, 2, 3], [25.0, 27.0, 28.0], [8.0, 6.0, 5.0], title="x <&> rating"))
    assert root.find(f"{SVG}polygon[@class='band']") is not None
    mu = root.find(f"{SVG}polyline[@class='mu']")
    assert mu is not None and len(mu.get("points", "").split()) == 3
    assert root.find(f"{SVG}polyline[@class='conservative']") is not None
    assert "x <&> rating" in "".join(root.itertext())


def test_histogram_and_bars_draw_one_mark_per_bin_or_value() -> None:
    root = _parse(histogram([10, 20, 20, 30, 45], title="scores", xlabel="points", bins=5))
    assert len(root.findall(f"{SVG}rect")) == 5
    root = _parse(bar_chart(["2p·1", "2p·2", "<b>"], [0.5, 0.25, 1.0], title="seats", ylabel="share", ymax=1))
    assert len(root.findall(f"{SVG}rect")) == 3 and "<b>" in "".join(root.itertext())


def test_matrix_colours_each_pair_that_met() -> None:
    share = [[None, 0.75, None], [0.25, None, 0.5], [None, 0.5, None]]
    met = [[0, 4, 0], [4, 0, 2], [0, 2, 0]]
    root = _parse(matrix_chart(["a", "b", "c"], share, met, title="h2h"))
    coloured = [r for r in root.findall(f"{SVG}rect") if r.get("fill", "").startswith("rgb(")]
    assert len(coloured) == 4
    assert any("a ahead of b in 75% of 4 meetings" in "".join(r.itertext()) for r in coloured)


@pytest.mark.parametrize("svg", [
    rating_chart([], [], [], title="r"), histogram([], title="h", xlabel="x"),
    bar_chart([], [], title="b", ylabel="y"), matrix_chart([], [], [], title="m"),
])  # fmt: skip
def test_empty_charts_say_so(svg: str) -> None:
    assert "no data yet" in "".join(_parse(svg).itertext())
