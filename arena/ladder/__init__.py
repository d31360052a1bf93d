"""The continuous ladder: the service that plays it (:mod:`.service`), who is on it
(:mod:`.field`), how it asks its format (:mod:`.pull`) and its ratings in the store
(:mod:`.ratings`).  The rule that picks tables is the format's,
:mod:`arena.tournament.formats.ladder`."""
