"""A command group that imports a subcommand's module only when that subcommand is used.

``arena --help`` lists every subcommand from the one-line help strings given at registration, so
listing them imports nothing; ``arena bots list`` imports ``arena.cli.bots_cmd`` alone.  A
registration names its target as ``"module:attribute"``: a :class:`typer.Typer` becomes a command
group, a function becomes a single command.
"""

from __future__ import annotations

import importlib
from collections.abc import Iterator, Mapping, MutableMapping
from dataclasses import dataclass
from typing import Any

import typer
from typer import _click as click  # Typer's own click (typer >= 0.29 vendors it)
from typer.core import TyperCommand, TyperGroup

from .interrupt import Interrupted


@dataclass(frozen=True)
class LazyCommand:
    """A subcommand by name: where it lives (``"module:attribute"``) and its one-line help."""

    name: str
    target: str
    help: str

    def load(self) -> click.Command:
        """Import the target and turn it into a click command named :attr:`name`."""
        module_name, _, attribute = self.target.partition(":")
        obj = getattr(importlib.import_module(module_name), attribute)
        command: click.Command
        if isinstance(obj, typer.Typer):
            command = typer.main.get_group(obj)  # no completion options: those are on `arena`
        elif callable(obj):
            single = typer.Typer(add_completion=False)
            single.command(name=self.name)(obj)
            command = typer.main.get_command(single)
        else:  # pragma: no cover - a registration error caught by the tests
            raise TypeError(f"{self.target} is neither a Typer app nor a function")
        command.name = self.name
        return command

    def placeholder(self) -> click.Command:
        """A stand-in carrying only the name and the help, for listing without importing."""
        return TyperCommand(self.name, help=self.help, short_help=self.help)


class LazyCommands(MutableMapping[str, click.Command]):
    """Subcommands by name, each imported on first access (``keys()`` imports nothing).

    Setting an item adds an already built command (what :meth:`TyperGroup.add_command` does)."""

    def __init__(self, specs: Mapping[str, LazyCommand]) -> None:
        self.specs = dict(specs)
        self.loaded: dict[str, click.Command] = {}

    def __getitem__(self, name: str) -> click.Command:
        if name not in self.loaded:
            self.loaded[name] = self.specs[name].load()
        return self.loaded[name]

    def __setitem__(self, name: str, command: click.Command) -> None:
        self.loaded[name] = command
        if name not in self.specs:
            self.specs[name] = LazyCommand(name, "", command.get_short_help_str())

    def __delitem__(self, name: str) -> None:
        del self.specs[name]
        self.loaded.pop(name, None)

    def __iter__(self) -> Iterator[str]:
        return iter(self.specs)

    def __len__(self) -> int:
        return len(self.specs)

    def __contains__(self, name: object) -> bool:
        return name in self.specs


class LazyGroup(TyperGroup):
    """A :class:`TyperGroup` over :class:`LazyCommand` registrations (see :func:`lazy_group`)."""

    specs: Mapping[str, LazyCommand] = {}

    def __init__(self, **attrs: object) -> None:
        super().__init__(**attrs)  # type: ignore[arg-type]
        self.lazy = LazyCommands(self.specs)
        self.commands = self.lazy
        self.listing = False

    def list_commands(self, ctx: click.Context) -> list[str]:
        return list(self.lazy)

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        spec = self.lazy.specs.get(cmd_name)
        if spec is None:
            return None
        return spec.placeholder() if self.listing else self.lazy[cmd_name]

    def invoke(self, ctx: click.Context) -> Any:
        """Run the subcommand; a KeyboardInterrupt escaping it leaves as :class:`Interrupted`
        (click would turn it into a silent exit)."""
        try:
            return super().invoke(ctx)
        except KeyboardInterrupt as exc:
            raise Interrupted from exc
        except Exception as exc:  # a store error escaping any command: one message (arena.cli.common)
            from .common import escaped

            message = escaped(exc)
            if message is None:
                raise
            raise message from None

    def format_help(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        self.listing = True
        try:
            super().format_help(ctx, formatter)
        finally:
            self.listing = False


def lazy_group(specs: Mapping[str, LazyCommand]) -> type[LazyGroup]:
    """A :class:`LazyGroup` class over ``specs`` (pass it as ``typer.Typer(cls=...)``)."""
    return type("ArenaGroup", (LazyGroup,), {"specs": dict(specs)})
