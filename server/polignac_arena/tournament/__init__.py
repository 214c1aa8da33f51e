"""Tournaments: TOML files, schedules run by a local pool of matches, results and ratings in the store."""
