"""The lobby's schedule as a format: one remote bot's stream of matches (``arena serve``).

Entry 0 is the remote bot, entries ``1..players-1`` the lobby's local opponents.  Matches come
one at a time (the next only once the previous one is done: a remote bot plays one match at a
time), in seat-rotation sets: game ``n`` (of set ``n // players``) seats the table under rotation
``n % players``.  Every game has dice of its own, its seed derived from the lobby's seed,
``options["stream"]`` (the remote bot's version id, so every remote bot meets its own dice) and
``n``.  No duplicate dice here: a remote bot keeps its memory from one match to the next and sees
every throw of a game (the events of its requests), so a later rotation on the same seed would
be played with dice it already knows.  ``games`` matches in all, or without end with
``options["endless"]``.  A pure function of the settings and the recorded matches.
"""

from __future__ import annotations

from arena.tournament.pairing import derive_seed, rotations

from .base import Finished, Format, FormatError, History, Next, Pairing, Play, Settings, Wait


class RemoteStream(Format):
    """One remote bot against the lobby's opponents, one match at a time."""

    name = "lobby"

    @classmethod
    def check(cls, settings: Settings) -> None:
        if not settings.options.get("endless"):
            super().check(settings)
        if not 2 <= settings.entries <= 4 or settings.table_sizes != (settings.entries,):
            raise FormatError("a lobby table seats the remote bot and its opponents: 2-4 players")

    def next(self, history: History) -> Next:
        s = self.settings
        if not all(m.done for m in history.matches):
            return Wait()
        n = len(history.matches)
        if n >= s.games and not s.options.get("endless"):
            return Finished()
        group = n // s.entries
        seating = rotations(tuple(range(s.entries)))[n % s.entries]
        seed = derive_seed(s.seed, int(s.options.get("stream", 0)), group, n % s.entries)  # its own dice
        return Play((Pairing(seed, f"g{group}", seating, round=group),))

    def planned(self) -> int | None:
        return None if self.settings.options.get("endless") else self.settings.games
