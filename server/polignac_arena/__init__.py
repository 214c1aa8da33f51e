"""Polignac Arena: the platform (referee, seats, tournaments, ratings, store, CLI)."""

__version__ = "0.1.0"
