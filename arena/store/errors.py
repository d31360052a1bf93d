"""The store's error types (standard library only: a command that merely names them stays fast)."""

from __future__ import annotations


class StoreError(Exception):
    """Base class of the store's errors."""


class AdvisedError(StoreError):
    """An error in two parts: ``fact`` says what is wrong in words for anyone (a web page shows it
    alone), ``advice`` what a user of the ``arena`` command can do about it (a did-you-mean, a
    command to run); the message is the two together."""

    def __init__(self, fact: str, advice: str = "") -> None:
        self.fact = fact
        self.advice = advice
        super().__init__(f"{fact}; {advice}" if advice else fact)


class SchemaTooNewError(StoreError):
    """The database was written by a newer Pool Arena; nothing was changed."""


class ForeignSchemaError(StoreError):
    """The database holds another program's Alembic schema, not Pool Arena's; nothing was changed."""


class SchemaTooOldError(StoreError):
    """A read-only open found an older schema, which only an open for writing can upgrade."""


class DatabaseUnavailableError(StoreError):
    """The database cannot be opened or reached."""


class DatabaseUrlError(DatabaseUnavailableError):
    """The database URL is not one this arena opens (unparseable, or another driver)."""


class DatabaseReadOnlyError(DatabaseUnavailableError):
    """The database file or its directory cannot be written; read-only commands still work."""


class NoDatabaseError(DatabaseUnavailableError):
    """A read-only open found no database where it looked (and created none)."""


class NumberOutOfRangeError(StoreError):
    """A number given to the database is beyond its integer columns (PostgreSQL's INTEGER ids and
    counts end at 2,147,483,647): nothing stored has it, and nothing was written."""


class NulInTextError(StoreError):
    """Text given to the database holds a NUL character, which PostgreSQL's text columns cannot
    hold: nothing stored has it (a lookup finds nothing), and nothing was written."""


class DatabaseDamagedError(StoreError):
    """The database reports damaged pages; ``where`` names it and ``detail`` is what was seen."""

    def __init__(self, where: str, detail: str, *, sqlite: bool = True) -> None:
        self.where = where
        self.detail = detail
        if sqlite:
            advice = (
                f"Run 'arena db check' to see what is damaged, and restore a backup made with "
                f"'arena db backup FILE': stop every arena command using it, copy the backup over "
                f"{where} and delete {where}-wal and {where}-shm. Without a backup, start a "
                f"fresh database elsewhere (another ARENA_HOME); this file stays as it is."
            )
        else:
            advice = "Run 'arena db check' to see which replays are damaged, and restore your pg_dump backup."
        super().__init__(f"the database {where} is damaged ({detail}). {advice}")


class BotRegistryError(StoreError):
    """A registry request that cannot be done (bad name, bad file, ...)."""


class UnknownBotError(BotRegistryError, AdvisedError):
    """No bot (or version) of that name; ``close`` the registered names that look like it (what
    ``advice`` suggests), for a caller that merges them with suggestions of its own."""

    def __init__(self, fact: str, advice: str = "", close: tuple[str, ...] = ()) -> None:
        super().__init__(fact, advice)
        self.close = close


class DuplicateUploadError(BotRegistryError):
    """The uploaded file is identical to the bot's current version."""


class MissingBotFileError(BotRegistryError):
    """A registered version whose stored file is gone (the data folder's ``artifacts/`` cleaned,
    or the database restored without it): playing it would only record crashes."""


class StoredTimeControlError(StoreError):
    """A stored tournament's time control is out of bounds (an infinite move time, say, which an
    earlier version accepted): its matches cannot be played."""
