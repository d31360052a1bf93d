"""The ``arena`` command line: one Typer sub-app per noun."""
