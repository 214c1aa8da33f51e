"""Tests of the league: lobby, remote bots, reattach."""
