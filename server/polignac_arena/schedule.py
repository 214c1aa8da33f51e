"""Tournament schedules: round robin, duplicate deals, and the ladder's next table.

Pure functions, no I/O and no clock: the same arguments give the same schedule on every
machine and Python version (randomness comes from ``random.Random`` seeded with text, and
only its ``random()`` method is used, the one whose stream Python promises to keep).

A :class:`Fixture` is one scheduled match: ``seats[i]`` is the entrant (a string key) in
seat i, ``index`` its position in schedule order (ratings are applied in that order), and
``seed`` the match seed, ``match_seed(tournament_seed, group)``.  Fixtures that replay the
same deal share their ``group`` and therefore their seed.

Guarantees of :func:`round_robin` (n entrants, tables of k; tests/test_schedule.py checks
them for every n from 4 to 12 and k from 3 to 6, with 1 and 2 rounds):

* **Pairs, small cases.** When C(n, k) <= :data:`ALL_COMBINATIONS_LIMIT` (200), a round is
  every k-subset once, in a seeded random order: every pair meets exactly C(n-2, k-2) times
  a round.
* **Pairs, larger cases: a cyclic design.** The entrants are numbered 0..n-1 (a seeded random
  labelling) and a round develops a few base blocks B mod n (the tables B, B+1, ..., B+n-1),
  so a round is a multiple of n tables (:func:`design_round_size`).  In a development, all
  pairs at the same cyclic distance meet equally often, so balancing the pairs is balancing
  about n/2 distance counts: a small local search over the base blocks.  After the first
  round, the meetings of any two pairs differ by at most one, and every pair has met: a
  reference round found with a fixed seed (checked balanced for every n <= 60) stands in if
  the tournament-seeded search fails.  After each later round the search aims for the same;
  it gets there for every case the tests cover (n <= 12, 2 rounds) and most larger ones, but
  not always: for 12 entrants at tables of 3 (third round), 14 at tables of 5 or 21 at tables
  of 6 (second round), an exhaustive search shows that no cyclic round of that size can, and
  there (as in a few larger cases the search misses) the meetings differ by two.  The search
  may change only the last two rounds, and large rounds (over 100 tables) get a search
  budget per table after the first, so a round costs the same however many came before
  (well under a few ms a table at 100 entrants); then the meetings may drift apart by a few.
  Once every pair has met equally often, the rounds so far repeat, each time under a new
  random labelling, which keeps every guarantee at no further search.
* **Games.** Every entrant plays the same number of matches in every round: C(n-1, k-1), or
  k per base block.
* **Seats.** Cut each entrant's matches, in schedule order, into blocks of k: in every
  complete block it sits once in each seat, and in the last, partial block in distinct
  seats.  So in every prefix of the schedule (each round, a stopped tournament) each
  entrant's counts in the k seats differ by at most one.  (The seats are a proper
  k-edge-colouring of the bipartite graph of entrant blocks and tables, which Kőnig's theorem
  promises; it is found edge by edge with alternating-path swaps.)

:func:`duplicate` replays each round-robin table k times with the same deal and the seats
rotated; :func:`ladder_next` picks one table at a time (:mod:`polignac_arena.matchmaking`).
"""

from __future__ import annotations

import functools
import hashlib
import itertools
import math
import random
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

from polignac_arena.matchmaking import Meetings, fill_table
from polignac_arena.ratings import RatingEnv

__all__ = [
    "ALL_COMBINATIONS_LIMIT",
    "LADDER_SPREAD",
    "MAX_TABLE_SIZE",
    "MIN_TABLE_SIZE",
    "Fixture",
    "design_round_size",
    "duplicate",
    "extra_round",
    "ladder_next",
    "match_seed",
    "round_robin",
    "round_size",
    "seat_order",
]

MIN_TABLE_SIZE = 3
MAX_TABLE_SIZE = 6
#: Up to this many k-subsets of the entrants, a round-robin round is all of them.
ALL_COMBINATIONS_LIMIT = 200
# The design search: moves per restart, restarts, the chance of taking an uphill move, and
# how many round sizes are tried before settling for the smallest.
_SEARCH_STEPS = 20_000
_RESTARTS = 8
_UPHILL = 0.01
_ROUND_SIZE_TRIALS = 4
# How many of the latest rounds the search may still change: a bounded window keeps the cost
# of a round the same however many rounds came before.
_WINDOW = 2
# Rounds of more tables than this get fewer tries after the first: their search is the cost.
_LARGE_ROUND = 100
_LARGE_RESTARTS = 2
_LARGE_STEPS_PER_TABLE = 20


@dataclass(frozen=True)
class Fixture:
    """One scheduled match: who sits where, its place in the schedule, and its deal seed."""

    index: int
    seats: tuple[str, ...]
    seed: int
    group: int = 0


def match_seed(tournament_seed: int, group: int) -> int:
    """The deal seed of a fixture group (0..2**64-1), derived from the tournament seed by SHA-256.

    >>> match_seed(7, 0) == match_seed(7, 0) != match_seed(7, 1)
    True
    """
    digest = hashlib.sha256(f"polignac-arena/match-seed/{tournament_seed}/{group}".encode()).digest()
    return int.from_bytes(digest[:8], "big")


# -- validation --------------------------------------------------------------------------


def _validate(entrants: Sequence[str], table_size: int, rounds: int | None = None) -> list[str]:
    if isinstance(entrants, str) or not isinstance(entrants, Sequence):
        raise ValueError(f"entrants must be a sequence of names, got {entrants!r}")
    names = list(entrants)
    for name in names:
        if not isinstance(name, str) or not name:
            raise ValueError(f"every entrant must be a non-empty string, got {name!r}")
    if isinstance(table_size, bool) or not isinstance(table_size, int) or not MIN_TABLE_SIZE <= table_size <= MAX_TABLE_SIZE:
        raise ValueError(f"table size must be an integer from {MIN_TABLE_SIZE} to {MAX_TABLE_SIZE}, got {table_size!r}")
    if len(names) < table_size:
        raise ValueError(f"a table of {table_size} needs at least {table_size} entrants, got {len(names)}")
    duplicates = sorted({name for name in names if names.count(name) > 1})
    if duplicates:
        raise ValueError(f"entrants must be unique, listed more than once: {', '.join(duplicates)}")
    if rounds is not None and (isinstance(rounds, bool) or not isinstance(rounds, int) or rounds < 1):
        raise ValueError(f"rounds must be an integer >= 1, got {rounds!r}")
    return names


# -- randomness (random() only: its stream is the one Python keeps across versions) ----


def _below(rng: random.Random, n: int) -> int:
    return min(int(rng.random() * n), n - 1)


def _shuffle(rng: random.Random, items: list[int]) -> None:
    for i in range(len(items) - 1, 0, -1):
        j = _below(rng, i + 1)
        items[i], items[j] = items[j], items[i]


# -- round robin -------------------------------------------------------------------------


def design_round_size(entrants: int, table_size: int) -> int:
    """Tables in a round of the cyclic design (used when C(n, k) > :data:`ALL_COMBINATIONS_LIMIT`).

    n tables per base block: the fewest base blocks with enough differences for every pair to
    meet, or more if a fixed-seed search finds no balanced round with that many.  A pure
    function of (n, k).

    >>> design_round_size(12, 6), design_round_size(10, 4), design_round_size(12, 3)
    (12, 10, 36)
    """
    return entrants * len(_reference_round(entrants, table_size))


def round_size(entrants: int, table_size: int) -> int:
    """Tables in one round-robin round: C(n, k) when that is at most :data:`ALL_COMBINATIONS_LIMIT`, else :func:`design_round_size`."""
    combinations = math.comb(entrants, table_size)
    return combinations if combinations <= ALL_COMBINATIONS_LIMIT else design_round_size(entrants, table_size)


# The cyclic design.  Entrants are the residues mod n; a round is the development of a few
# base blocks (k-subsets B: the tables B, B+1, ..., B+n-1), so every entrant plays k tables
# per base block.  Pair {x, y} meets as often as the blocks hold pairs at the cyclic
# distance d = min(x-y, y-x mod n) (twice that when d = n/2, as B+i and B+i+n/2 both hold
# it): every pair of a "difference class" d meets equally often, and balancing the pairs is
# balancing about n/2 class counts, a small search over the base blocks.


def _distance(n: int, a: int, b: int) -> int:
    d = (a - b) % n
    return min(d, n - d)


def _meetings_per_class(n: int, blocks: Sequence[Sequence[int]]) -> list[int]:
    """How often a pair at each cyclic distance (index 1..n//2; 0 unused) meets in the development of ``blocks``."""
    counts = [0] * (n // 2 + 1)
    for block in blocks:
        for a, b in itertools.combinations(block, 2):
            d = _distance(n, a, b)
            counts[d] += 2 if 2 * d == n else 1
    return counts


def _spread(counts: list[int]) -> int:
    return max(counts[1:]) - min(counts[1:])


def _least_blocks(n: int, k: int) -> int:
    """The fewest base blocks whose differences can reach every cyclic distance (n/2 costs a whole pair)."""
    return -(-(n // 2) // math.comb(k, 2))


@functools.lru_cache(maxsize=256)
def _reference_round(n: int, k: int) -> tuple[tuple[int, ...], ...]:
    """A balanced round found with a fixed seed: its size is the round size, and it stands in
    for a first round that the tournament-seeded search fails to balance."""
    least = _least_blocks(n, k)
    first: tuple[tuple[int, ...], ...] | None = None
    for count in range(least, least + _ROUND_SIZE_TRIALS):
        (blocks,) = _design(n, k, count, 1, random.Random(f"polignac-arena/round-size/{n}/{k}/{count}"), None).rounds
        found = tuple(tuple(block) for block in blocks)
        if _spread(_meetings_per_class(n, blocks)) <= 1:
            return found
        first = first or found
    assert first is not None
    return first


def _random_block(n: int, k: int, rng: random.Random) -> list[int]:
    others = list(range(1, n))
    _shuffle(rng, others)
    return [0, *others[: k - 1]]


def _improve(
    n: int, rounds: list[list[list[int]]], base: Sequence[int], rng: random.Random, steps: int = _SEARCH_STEPS
) -> tuple[tuple[int, ...], int]:
    """Move elements of base blocks until the pair meetings are within one after every round.

    Local search over the blocks of ``rounds`` (0 stays in each block), which follow earlier
    rounds whose meetings per class add up to ``base``: a move replaces one element of one
    block and is kept when the cost does not grow, and now and then when it does.  The cost
    sums, over these rounds, the squared cumulative meetings of every pair; for fixed totals
    it is least exactly when the meetings are within one after every round, and the search
    stops when they are (or after a bounded number of moves).
    Returns the score of these rounds, lower is better: for each round in turn, how far the
    meetings after it spread beyond one; then the cost.
    """
    h = n // 2
    weight = [0] + [n // 2 if 2 * d == n else n for d in range(1, h + 1)]  # pairs per class
    cumulative: list[list[int]] = []
    for blocks in rounds:
        counts = _meetings_per_class(n, blocks)
        cumulative.append([a + b for a, b in zip(cumulative[-1] if cumulative else base, counts, strict=True)])
    cost = sum(w * c * c for counts in cumulative for w, c in zip(weight, counts, strict=True))
    worst = max(_spread(counts) for counts in cumulative)
    movable = len(rounds)
    for _ in range(steps):
        if worst <= 1:
            break
        r = _below(rng, movable)
        block = rounds[r][_below(rng, len(rounds[r]))]
        position = 1 + _below(rng, len(block) - 1)
        leaving, joining = block[position], 1 + _below(rng, n - 1)
        if joining in block:
            continue
        changes: list[tuple[int, int]] = []
        for z in block:
            if z != leaving:
                for x, sign in ((leaving, -1), (joining, +1)):
                    d = (x - z) % n
                    d = min(d, n - d)
                    changes.append((d, sign * (2 if 2 * d == n else 1)))
        delta = 0
        for counts in cumulative[r:]:
            for d, step in changes:
                delta += weight[d] * (2 * counts[d] * step + step * step)
                counts[d] += step
        if delta <= 0 or rng.random() < _UPHILL:
            block[position] = joining
            cost += delta
            worst = max(_spread(counts) for counts in cumulative)
            continue
        for counts in cumulative[r:]:
            for d, step in changes:
                counts[d] -= step
    return tuple(max(0, _spread(counts) - 1) for counts in cumulative), cost


@dataclass
class _Design:
    """Base blocks round by round, with each round's cumulative meetings per class, spread score and cost."""

    rounds: list[list[list[int]]]
    cumulative: list[list[int]]
    spreads: list[int]
    costs: list[int]
    period: int | None = None
    """When the meetings after the first ``period`` rounds are all equal: the design repeats them."""

    def keep(self, first: int, rounds: list[list[list[int]]], n: int) -> None:
        """Replace the rounds from ``first`` on."""
        weight = [0] + [n // 2 if 2 * d == n else n for d in range(1, n // 2 + 1)]
        del self.rounds[first:], self.cumulative[first:], self.spreads[first:], self.costs[first:]
        for blocks in rounds:
            counts = _meetings_per_class(n, blocks)
            previous = self.cumulative[-1] if self.cumulative else [0] * len(counts)
            cumulative = [a + b for a, b in zip(previous, counts, strict=True)]
            self.rounds.append(blocks)
            self.cumulative.append(cumulative)
            self.spreads.append(max(0, _spread(cumulative) - 1))
            self.costs.append(sum(w * c * c for w, c in zip(weight, cumulative, strict=True)))


def _design(n: int, k: int, blocks_per_round: int, rounds: int, rng: random.Random, fallback: Sequence[Sequence[int]] | None) -> _Design:
    """Base blocks for up to ``rounds`` rounds, the meetings within one after every round when the
    search gets there.

    Round by round: random blocks for the new round, then :func:`_improve`, on the new round
    alone or (every other try) on it and the :data:`_WINDOW` - 1 rounds before it; if that stops
    short, the new round is drawn again, a few times, keeping the best (earlier rounds'
    balance first).  After the first round, large rounds get fewer and shorter tries, so that
    a table costs little however many rounds there are.  If the first round cannot be
    balanced, ``fallback`` (a balanced round) is taken instead.  As soon as every pair has
    met equally often the design stops growing: its rounds so far are its period, repeated
    (relabelled) by :func:`_tables`, and the balance within one after every round holds on.
    """
    design = _Design([], [], [], [])
    large = blocks_per_round * n > _LARGE_ROUND
    steps = min(_SEARCH_STEPS, _LARGE_STEPS_PER_TABLE * blocks_per_round * n) if large else _SEARCH_STEPS
    for _ in range(rounds):
        best: tuple[tuple[tuple[int, ...], int], int, list[list[list[int]]]] | None = None
        cheap = large and bool(design.rounds)
        for attempt in range(_LARGE_RESTARTS if cheap else _RESTARTS):
            first = len(design.rounds) if attempt % 2 == 0 else max(0, len(design.rounds) + 1 - _WINDOW)
            trial = [[block[:] for block in blocks] for blocks in design.rounds[first:]]
            trial.append([_random_block(n, k, rng) for _ in range(blocks_per_round)])
            base = design.cumulative[first - 1] if first else [0] * (n // 2 + 1)
            spreads, cost = _improve(n, trial, base, rng, steps if cheap else _SEARCH_STEPS)
            score = ((*design.spreads[:first], *spreads), sum(design.costs[:first]) + cost)
            if best is None or score < best[0]:
                best = (score, first, trial)
            if not any(score[0]):
                break
        assert best is not None
        design.keep(best[1], best[2], n)
        if len(design.rounds) == 1 and design.spreads[0] and fallback is not None:
            design.keep(0, [[list(block) for block in fallback]], n)
        if _spread(design.cumulative[-1]) == 0:
            design.period = len(design.rounds)
            break
    return design


def _tables(n: int, k: int, rounds: int, rng: random.Random) -> list[list[int]]:
    """The round-robin tables (entrant indices, unseated), in schedule order."""
    tables: list[list[int]] = []
    if math.comb(n, k) <= ALL_COMBINATIONS_LIMIT:
        combinations = [list(c) for c in itertools.combinations(range(n), k)]
        for _ in range(rounds):
            order = list(range(len(combinations)))
            _shuffle(rng, order)
            tables.extend(list(combinations[i]) for i in order)
        return tables
    label = list(range(n))  # residue -> entrant: a random labelling, drawn again for each repetition of a period
    _shuffle(rng, label)
    reference = _reference_round(n, k)
    design = _design(n, k, len(reference), rounds, rng, reference)
    period = design.period or len(design.rounds)
    for number in range(rounds):
        if number and number % period == 0:
            _shuffle(rng, label)
        blocks = design.rounds[number % period]
        round_tables = [[label[(x + i) % n] for x in block] for block in blocks for i in range(n)]
        order = list(range(len(round_tables)))
        _shuffle(rng, order)
        tables.extend(round_tables[i] for i in order)
    return tables


def _seat(tables: list[list[int]], n: int, k: int, rng: random.Random) -> list[tuple[int, ...]]:
    """Seat every table so each entrant's i-th block of k matches covers the k seats once.

    Bipartite graph: on one side, (entrant, block) nodes, an entrant's matches in schedule
    order cut into blocks of k; on the other, the tables.  Every node has degree <= k, so the
    edges have a proper k-colouring (Kőnig), found edge by edge with alternating-path swaps;
    an edge's colour is the entrant's seat at that table.
    """
    played = [0] * n
    block_id: dict[tuple[int, int], int] = {}
    block_seat: list[list[int]] = []  # block node -> seat -> table (-1: free)
    table_seat: list[list[int]] = []  # table -> seat -> block node (-1: free)
    block_entrant: list[int] = []
    for t, members in enumerate(tables):
        table_seat.append([-1] * k)
        order = list(members)
        _shuffle(rng, order)
        for e in order:
            key = (e, played[e] // k)
            played[e] += 1
            if key not in block_id:
                block_id[key] = len(block_seat)
                block_seat.append([-1] * k)
                block_entrant.append(e)
            u = block_id[key]
            free_u = [c for c in range(k) if block_seat[u][c] < 0]
            free_t = [c for c in range(k) if table_seat[t][c] < 0]
            common = [c for c in free_u if table_seat[t][c] < 0]
            if common:
                colour = common[_below(rng, len(common))]
            else:
                colour, other = free_u[0], free_t[0]
                # Swap colour/other along the path from table t that starts with colour; it
                # cannot reach u (u has no edge of that colour), and afterwards colour is free at t.
                path: list[tuple[int, int]] = []  # (table, block) edges in path order
                node, on_table, c = t, True, colour
                while True:
                    nxt = table_seat[node][c] if on_table else block_seat[node][c]
                    if nxt < 0:
                        break
                    path.append((node, nxt) if on_table else (nxt, node))
                    node, on_table, c = nxt, not on_table, (other if c == colour else colour)
                colours = []
                for i, (pt, pb) in enumerate(path):
                    c = colour if i % 2 == 0 else other
                    colours.append(c)
                    table_seat[pt][c] = -1
                    block_seat[pb][c] = -1
                for (pt, pb), c in zip(path, colours, strict=True):
                    swapped = other if c == colour else colour
                    table_seat[pt][swapped] = pb
                    block_seat[pb][swapped] = pt
            table_seat[t][colour] = u
            block_seat[u][colour] = t
    return [tuple(block_entrant[u] for u in seats) for seats in table_seat]


def _seated_tables(entrants: Sequence[str], table_size: int, rounds: int, seed: int) -> tuple[list[str], list[tuple[int, ...]]]:
    names = _validate(entrants, table_size, rounds)
    if isinstance(seed, bool) or not isinstance(seed, int):
        raise ValueError(f"the tournament seed must be an integer, got {seed!r}")
    rng = random.Random(f"polignac-arena/round-robin/{seed}/{len(names)}/{table_size}")
    tables = _tables(len(names), table_size, rounds, rng)
    return names, _seat(tables, len(names), table_size, rng)


def round_robin(entrants: Sequence[str], table_size: int, rounds: int, seed: int) -> list[Fixture]:
    """``rounds`` rounds in which every entrant meets every other equally often (see the module notes).

    Every fixture is its own deal group: ``group == index`` and ``seed == match_seed(seed, index)``.
    The schedule depends on the entrants' order as given, the table size, the rounds and the seed.
    """
    names, seated = _seated_tables(entrants, table_size, rounds, seed)
    return [Fixture(index=i, seats=tuple(names[e] for e in seats), seed=match_seed(seed, i), group=i) for i, seats in enumerate(seated)]


def duplicate(entrants: Sequence[str], table_size: int, rounds: int, seed: int) -> list[Fixture]:
    """The round-robin tables, each replayed k times with the same deal and the seats rotated.

    Group g is the g-th round-robin table: fixtures ``g*k .. g*k + k-1``, all with
    ``group == g`` and ``seed == match_seed(seed, g)``; in rotation r the entrant who sits in
    seat j of rotation 0 sits in seat (j + r) mod k, so every entrant of the table holds every
    hand (seat of the deal) exactly once.  Pair balance is the round robin's, times k.
    """
    names, seated = _seated_tables(entrants, table_size, rounds, seed)
    k = table_size
    fixtures: list[Fixture] = []
    for group, base in enumerate(seated):
        deal = match_seed(seed, group)
        for r in range(k):
            seats = tuple(names[base[(i - r) % k]] for i in range(k))
            fixtures.append(Fixture(index=len(fixtures), seats=seats, seed=deal, group=group))
    return fixtures


def extra_round(entrants: Sequence[str], table_size: int, seed: int, first_index: int, first_group: int, *, replays: bool) -> list[Fixture]:
    """One more round for a tournament that runs until it knows, numbered after what is scheduled.

    The round is drawn like a first round (:func:`duplicate` when ``replays``, else
    :func:`round_robin`) from a schedule seed derived from ``seed`` and ``first_index``, so
    the rounds already stored never change; its fixtures continue the indices from
    ``first_index`` and the deal groups from ``first_group``, and each group's deal is
    ``match_seed(seed, group)`` as everywhere.
    """
    if isinstance(seed, bool) or not isinstance(seed, int):
        raise ValueError(f"the tournament seed must be an integer, got {seed!r}")
    digest = hashlib.sha256(f"polignac-arena/extra-round/{seed}/{first_index}".encode()).digest()
    drawn = (duplicate if replays else round_robin)(entrants, table_size, 1, int.from_bytes(digest[:8], "big"))
    return [
        Fixture(index=first_index + f.index, seats=f.seats, seed=match_seed(seed, first_group + f.group), group=first_group + f.group)
        for f in drawn
    ]


# -- ladder ------------------------------------------------------------------------------

#: A ladder table's other seats go to entrants at most this many games above the least played
#: (after the match), so match counts stay within this spread.
LADDER_SPREAD = 2


def seat_order(members: Iterable[str], rng_seed: int) -> tuple[str, ...]:
    """The members in seat order: sorted by name, shuffled by a generator seeded with ``rng_seed`` and the members."""
    seats = sorted(members)
    rng = random.Random(f"polignac-arena/ladder/{rng_seed}/{'/'.join(seats)}")
    order = list(range(len(seats)))
    _shuffle(rng, order)
    return tuple(seats[i] for i in order)


def ladder_next(
    entrants: Sequence[str],
    table_size: int,
    ratings: Mapping[str, tuple[float, float]],
    games: Mapping[str, int],
    last_table: frozenset[str] | None,
    rng_seed: int,
    env: RatingEnv,
    *,
    meetings: Meetings | None = None,
) -> tuple[str, ...]:
    """The next ladder table, in seat order.

    The anchor is the entrant with the fewest games (ties: the highest sigma, then the
    name).  The other seats go to entrants at most :data:`LADDER_SPREAD` games above the
    least played once this match is counted (the least played if too few are), chosen by
    :func:`polignac_arena.matchmaking.fill_table`: match quality, the pairs whose order the
    ratings are unsure of, the pairs that met least (from ``meetings``: pass the one the
    ladder keeps, or every pair counts as never met) and a jitter drawn from ``rng_seed``.  If the table is exactly ``last_table`` and
    another exists, its last seat goes to the next best candidate instead.  The seat order
    is :func:`seat_order`.  Entrants missing from ``ratings`` have the prior ``(env.mu,
    env.sigma)``, missing from ``games`` have 0.  The same arguments give the same table.
    """
    names = _validate(entrants, table_size)
    prior = (float(env.mu), float(env.sigma))
    meetings = meetings if meetings is not None else Meetings()
    played = {name: games.get(name, 0) for name in names}
    least = min(played.values())
    anchor = min(names, key=lambda e: (played[e], -float(ratings.get(e, prior)[1]), e))

    def candidates(table: Sequence[str]) -> list[str]:
        chosen = set(table)
        legal = [name for name in names if name not in chosen]
        if len(table) == table_size - 1 and last_table is not None and len(names) > table_size:
            repeat = [name for name in legal if chosen | {name} == last_table]
            legal = [name for name in legal if name not in repeat] or legal
        within = [name for name in legal if played[name] + 1 <= least + LADDER_SPREAD]
        if within:
            return within
        fewest = min(played[name] for name in legal)
        return [name for name in legal if played[name] == fewest]

    rng = random.Random(f"polignac-arena/ladder-pick/{rng_seed}")
    table = fill_table(anchor, table_size, candidates, ratings, env, meetings, len(names), rng)
    return seat_order(table, rng_seed)
