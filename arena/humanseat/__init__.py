"""A person plays a seat in the browser: the human seat.

The person's seat is an ordinary gRPC client of the referee (:class:`~arena.humanseat.bridge.HumanBridge`
holds the ``Play`` stream and exposes the current request to a web page), so the referee, its rules
checks, the records and the database are exactly those of bot matches.  A
:class:`~arena.humanseat.session.PlaySession` runs one such match (a match host with the bots and
the bridge), stores it like ``arena match`` does (the seat's bot is ``human:<name>``), and
:mod:`arena.web.play_routes` serves the page.
"""
