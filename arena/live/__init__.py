"""Live matches: the referee's events, from the worker processes to whoever watches.

- :mod:`.channel`: where the events go (one Unix datagram socket per database) and why;
- :mod:`.publish`: the worker side, an ``on_event`` observer that never waits;
- :mod:`.hub`: the web side, which applies the events with the engine and wakes the watchers;
- :mod:`.remote`: the hub's signed UDP endpoint, for workers on other hosts (a Dask cluster).
"""
