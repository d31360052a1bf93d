"""The web app: leaderboard, tournaments, matches and the replay viewer (FastAPI + Jinja2 + SVG).

Modules: :mod:`.app` (routes; ``create_app(db)``), :mod:`.head` (HEAD answered like GET,
for every route), :mod:`.queries` (paged database reads),
:mod:`.viewdata` (the viewer's states, computed with the engine), :mod:`.replays` (loading and
verifying stored replays), :mod:`.export` (the self-contained HTML viewer), :mod:`.server`
(uvicorn).  Importing this package imports neither FastAPI nor uvicorn, so the CLI stays quick.
"""
