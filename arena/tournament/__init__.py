"""Tournaments: pairing and scheduling, running matches in parallel worker processes, resuming."""
