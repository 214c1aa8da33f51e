"""TrueSkill ratings (server/polignac_arena/ratings.py).

Two-player results are checked against the closed-form TrueSkill update (Herbrich, Minka and
Graepel 2007), written out below with the standard library's normal distribution, not with
the ``trueskill`` package.  The trueskill package computes the normal cdf with a rational
approximation (relative error about 1e-7), hence the 2e-5 tolerance.  Multiplayer standings
have no closed form: they are checked for invariants and pinned to 4 decimals as a regression.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from statistics import NormalDist

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from polignac_arena.ratings import (
    TRUESKILL_DEFAULTS,
    Rating,
    RatingEnv,
    conservative,
    match_quality,
    new_version,
    rate_match,
    replay_ratings,
    win_probability,
)

ENV = TRUESKILL_DEFAULTS  # the published values and the regressions below are TrueSkill's own defaults
PRIOR = (ENV.mu, ENV.sigma)
N = NormalDist()
TOL = 2e-5


def closed_form_1v1(env: RatingEnv, a: tuple[float, float], b: tuple[float, float], drawn: bool) -> tuple[Rating, Rating]:
    """TrueSkill's exact update for a 2-player match that ``a`` wins (or that is drawn)."""
    var_a = a[1] ** 2 + env.tau**2  # the dynamics tau is added before the update
    var_b = b[1] ** 2 + env.tau**2
    c = math.sqrt(2 * env.beta**2 + var_a + var_b)
    t = (a[0] - b[0]) / c
    # Draw margin: P(|perf_a - perf_b| <= eps) = draw_probability with equal skills.
    eps = N.inv_cdf((env.draw_probability + 1) / 2) * math.sqrt(2) * env.beta / c
    if not drawn:
        x = t - eps
        v = N.pdf(x) / N.cdf(x)
        w = v * (v + x)
    else:
        hi, lo = eps - t, -eps - t
        z = N.cdf(hi) - N.cdf(lo)
        v = (N.pdf(lo) - N.pdf(hi)) / z
        w = v * v + (hi * N.pdf(hi) - lo * N.pdf(lo)) / z
    new_a = Rating(a[0] + var_a / c * v, math.sqrt(var_a * (1 - var_a / c**2 * w)))
    new_b = Rating(b[0] - var_b / c * v, math.sqrt(var_b * (1 - var_b / c**2 * w)))
    return new_a, new_b


def assert_close(got: Sequence[Rating], expected: Sequence[tuple[float, float]], tol: float = TOL) -> None:
    assert len(got) == len(expected)
    for g, e in zip(got, expected, strict=True):
        assert g.mu == pytest.approx(e[0], abs=tol) and g.sigma == pytest.approx(e[1], abs=tol), (got, expected)


PAIRS = [
    (PRIOR, PRIOR),
    ((30.0, 4.0), (20.0, 7.0)),
    ((20.0, 7.0), (30.0, 4.0)),  # an upset
    ((25.0, 1.0), (40.0, 3.0)),
    ((12.5, 2.0), (12.0, 8.0)),
]
ENVS = [
    ENV,
    RatingEnv(mu=0.0, sigma=2.0, beta=1.0, tau=0.3, draw_probability=0.25),
    RatingEnv(tau=0.0, draw_probability=0.0),
    RatingEnv(),  # the shipped defaults
]


@pytest.mark.parametrize("env", ENVS, ids=["trueskill", "custom", "no-tau-no-draw", "shipped"])
@pytest.mark.parametrize(("a", "b"), PAIRS)
def test_two_player_win_matches_closed_form(env: RatingEnv, a: tuple[float, float], b: tuple[float, float]) -> None:
    assert_close(rate_match(env, [a, b], [1, 2]), list(closed_form_1v1(env, a, b, drawn=False)))
    # The same standings given the other way round.
    assert_close(rate_match(env, [b, a], [2, 1]), list(reversed(closed_form_1v1(env, a, b, drawn=False))))


@pytest.mark.parametrize("env", [*ENVS[:2], ENVS[3]], ids=["trueskill", "custom", "shipped"])
@pytest.mark.parametrize(("a", "b"), PAIRS)
def test_two_player_draw_matches_closed_form(env: RatingEnv, a: tuple[float, float], b: tuple[float, float]) -> None:
    assert_close(rate_match(env, [a, b], [1, 1]), list(closed_form_1v1(env, a, b, drawn=True)))


def test_published_default_1v1_values() -> None:
    # The values every TrueSkill implementation shows for a first win between newcomers.
    winner, loser = rate_match(ENV, [PRIOR, PRIOR], [1, 2])
    assert (round(winner.mu, 3), round(winner.sigma, 3)) == (29.396, 7.171)
    assert (round(loser.mu, 3), round(loser.sigma, 3)) == (20.604, 7.171)
    drawn = rate_match(ENV, [PRIOR, PRIOR], [1, 1])
    assert drawn[0] == drawn[1] and drawn[0].mu == pytest.approx(25.0)


def test_tau_is_added_before_the_update() -> None:
    # A near-certain rating barely moves without tau and moves more with it.
    sure = (25.0, 0.01)
    without = rate_match(RatingEnv(tau=0.0), [sure, PRIOR], [1, 2])[0]
    with_tau = rate_match(RatingEnv(tau=1.0), [sure, PRIOR], [1, 2])[0]
    assert abs(without.mu - 25.0) < 1e-3
    assert with_tau.mu - 25.0 > 100 * (without.mu - 25.0)


# -- multiplayer ---------------------------------------------------------------------------------

MULTI = {
    "3 players": ([PRIOR] * 3, [1, 2, 3], [(31.6754, 6.6560), (25.0000, 6.2079), (18.3246, 6.6560)]),
    "4 players, 2nd and 3rd tied": (
        [PRIOR] * 4,
        [1, 2, 2, 4],
        [(31.5640, 6.4047), (25.0000, 5.5594), (25.0000, 5.5594), (18.4360, 6.4047)],
    ),
    "4 players, unequal, a tie, a forfeiter last": (
        [(30.0, 5.0), (25.0, 25 / 3), (22.0, 3.0), (28.0, 6.0)],
        [2, 1, 2, 4],
        [(27.5681, 3.8081), (31.8886, 5.9993), (23.3176, 2.7114), (22.6628, 4.6594)],
    ),
    "6 players, two ties": (
        [PRIOR] * 6,
        [1, 1, 3, 3, 3, 6],
        [(29.4013, 5.3873), (29.4013, 5.3873), (24.3638, 5.0335), (24.3638, 5.0335), (24.3638, 5.0335), (18.1059, 6.1509)],
    ),
}


@pytest.mark.parametrize("name", list(MULTI))
def test_multiplayer_regression_values(name: str) -> None:
    priors, places, expected = MULTI[name]
    assert_close(rate_match(ENV, priors, places), expected, tol=5e-5)


@pytest.mark.parametrize("name", list(MULTI))
def test_multiplayer_invariants(name: str) -> None:
    priors, places, _ = MULTI[name]
    rated = rate_match(ENV, priors, places)
    best, worst = min(places), max(places)
    for prior, place, new in zip(priors, places, rated, strict=True):
        assert new.sigma < prior[1], "every sigma shrinks"
        if place == best and places.count(best) == 1:
            assert new.mu > prior[0], "the winner goes up"
        if place == worst:
            assert new.mu < prior[0], "the last goes down"
    # Tied players with equal priors get exactly equal ratings.
    for i in range(len(places)):
        for j in range(len(places)):
            if places[i] == places[j] and priors[i] == priors[j]:
                assert rated[i] == rated[j]


def test_a_forfeiter_last_is_just_last() -> None:
    # The referee has already placed the forfeiter last: rating him is rating a last place.
    priors = [(27.0, 4.0), (25.0, 5.0), (23.0, 6.0)]
    assert rate_match(ENV, priors, [2, 1, 3]) == rate_match(ENV, priors, [2, 1, 99])


def test_places_only_matter_by_order() -> None:
    priors = [(27.0, 4.0), (25.0, 5.0), (23.0, 6.0), (20.0, 2.0)]
    assert rate_match(ENV, priors, [1, 1, 3, 4]) == rate_match(ENV, priors, [1, 1, 2, 3])


def test_tied_order_does_not_matter() -> None:
    # Plain TrueSkill chains tied players in the order given; rate_match does not depend on it.
    priors = [(27.0, 4.0), (25.0, 5.0), (23.0, 6.0), (20.0, 2.0)]
    forward = rate_match(ENV, priors, [1, 2, 2, 4])
    backward = rate_match(ENV, [priors[0], priors[2], priors[1], priors[3]], [1, 2, 2, 4])
    assert_close([forward[0], forward[2], forward[1], forward[3]], backward, tol=1e-9)


@settings(max_examples=40, deadline=None)
@given(
    st.lists(
        st.tuples(st.floats(0, 50), st.floats(0.5, 9), st.integers(1, 6)),
        min_size=2,
        max_size=6,
    )
)
def test_rate_match_properties(players: list[tuple[float, float, int]]) -> None:
    priors = [(mu, sigma) for mu, sigma, _ in players]
    places = [place for _, _, place in players]
    rated = rate_match(ENV, priors, places)
    assert len(rated) == len(priors)
    for prior, new in zip(priors, rated, strict=True):
        assert math.isfinite(new.mu) and 0 < new.sigma <= math.sqrt(prior[1] ** 2 + ENV.tau**2) + 1e-9
    assert rated == rate_match(ENV, priors, places), "deterministic"


@pytest.mark.parametrize(
    ("ratings", "places", "message"),
    [
        ([PRIOR], [1], "at least 2"),
        ([PRIOR, PRIOR], [1], "2 ratings but 1 places"),
        ([PRIOR, PRIOR], [0, 1], "places are integers >= 1"),
        ([PRIOR, PRIOR], [1, True], "places are integers >= 1"),
        ([PRIOR, (25.0, 0.0)], [1, 2], "sigma > 0"),
        ([PRIOR, (math.nan, 1.0)], [1, 2], "finite"),
    ],
)
def test_rate_match_rejects_bad_input(ratings: list[tuple[float, float]], places: list[int], message: str) -> None:
    with pytest.raises(ValueError, match=message):
        rate_match(ENV, ratings, places)


# -- environment, conservative rating, probabilities, versions ---------------------------------


def test_env_defaults_and_trueskill() -> None:
    shipped = RatingEnv()
    assert (shipped.mu, shipped.sigma, shipped.beta, shipped.tau, shipped.draw_probability) == (25.0, 25 / 3, 25 / 3, 0.0, 0.03)
    assert (ENV.mu, ENV.sigma, ENV.beta, ENV.tau, ENV.draw_probability) == (25.0, 25 / 3, 25 / 6, 25 / 300, 0.10)
    assert ENV.initial == shipped.initial == Rating(25.0, 25 / 3)
    ts = RatingEnv(mu=10, sigma=2, beta=1, tau=0.5, draw_probability=0.2).trueskill_env()
    assert (ts.mu, ts.sigma, ts.beta, ts.tau, ts.draw_probability, ts.backend) == (10, 2, 1, 0.5, 0.2, None)


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"sigma": 0}, "sigma must be > 0"),
        ({"beta": -1}, "beta must be > 0"),
        ({"tau": -0.1}, "tau must be >= 0"),
        ({"draw_probability": 1.0}, r"draw_probability must be in \[0, 1\)"),
        ({"draw_probability": -0.1}, r"draw_probability must be in \[0, 1\)"),
        ({"mu": math.inf}, "mu must be a finite number"),
        ({"beta": "4"}, "beta must be a finite number"),
        ({"tau": True}, "tau must be a finite number"),
    ],
)
def test_env_validation(kwargs: dict[str, object], message: str) -> None:
    with pytest.raises(ValueError, match=message):
        RatingEnv(**kwargs)  # type: ignore[arg-type]  # bad values, on purpose


def test_conservative() -> None:
    assert conservative(25.0, 25 / 3) == pytest.approx(0.0)
    assert conservative(30.0, 2.0) == 24.0


def test_win_probability() -> None:
    assert win_probability(ENV, PRIOR, PRIOR) == 0.5
    a, b = (30.0, 3.0), (25.0, 4.0)
    expected = N.cdf(5.0 / math.sqrt(2 * ENV.beta**2 + 9.0 + 16.0))  # Phi(5 / sqrt(59.72...)) by hand
    assert win_probability(ENV, a, b) == pytest.approx(expected, abs=1e-12)
    assert win_probability(ENV, a, b) == pytest.approx(0.74118, abs=1e-5)
    assert win_probability(ENV, a, b) > 0.5 > win_probability(ENV, b, a)


@given(st.floats(-50, 80), st.floats(0.1, 10), st.floats(-50, 80), st.floats(0.1, 10))
def test_win_probability_symmetric(mu_a: float, s_a: float, mu_b: float, s_b: float) -> None:
    p, q = win_probability(ENV, (mu_a, s_a), (mu_b, s_b)), win_probability(ENV, (mu_b, s_b), (mu_a, s_a))
    assert p + q == pytest.approx(1.0, abs=1e-12)
    assert 0.0 <= p <= 1.0


def test_match_quality() -> None:
    assert match_quality(ENV, [PRIOR, (40.0, 2.0)]) < match_quality(ENV, [PRIOR, PRIOR]) <= 1.0
    assert match_quality(ENV, [PRIOR, PRIOR, PRIOR]) < match_quality(ENV, [PRIOR, PRIOR])


def test_new_version_keeps_mu_resets_sigma() -> None:
    assert new_version(ENV, (31.5, 1.2)) == Rating(31.5, 25 / 3)
    assert new_version(RatingEnv(sigma=5.0), (10.0, 0.5)) == Rating(10.0, 5.0)


# -- replay ------------------------------------------------------------------------------------------

RESULTS = [
    {"a": 1, "b": 2, "c": 3},
    {"b": 1, "c": 2, "d": 3},
    {"a": 1, "c": 1, "d": 3},
    {"d": 1, "a": 2, "b": 3},
]


def test_replay_is_the_fold_of_rate_match() -> None:
    expected = {name: ENV.initial for name in "abcd"}
    for result in RESULTS:
        names = sorted(result, key=lambda n: (result[n], n))
        rated = rate_match(ENV, [expected[n] for n in names], [result[n] for n in names])
        expected.update(zip(names, rated, strict=True))
    assert replay_ratings(ENV, "abcd", RESULTS) == expected


def test_replay_deterministic_and_independent_of_key_order() -> None:
    shuffled = [dict(reversed(list(result.items()))) for result in RESULTS]
    assert replay_ratings(ENV, "abcd", RESULTS) == replay_ratings(ENV, "abcd", RESULTS) == replay_ratings(ENV, "dcba", shuffled)


def test_replay_depends_on_the_order_of_results() -> None:
    forward = replay_ratings(ENV, "abcd", RESULTS)
    backward = replay_ratings(ENV, "abcd", list(reversed(RESULTS)))
    assert forward != backward
    assert forward == replay_ratings(ENV, "abcd", RESULTS)


def test_replay_initial_ratings_and_idle_entrants() -> None:
    start = {"a": new_version(ENV, (32.0, 1.5))}
    ratings = replay_ratings(ENV, "abcde", RESULTS[:1], initial=start)
    assert ratings["e"] == ENV.initial and ratings["d"] == ENV.initial
    assert ratings["a"].mu > 32.0
    assert replay_ratings(ENV, "ab", []) == {"a": ENV.initial, "b": ENV.initial}


@pytest.mark.parametrize(
    ("entrants", "results", "initial", "message"),
    [
        ("abc", [{"a": 1, "z": 2}], None, "unknown entrants"),
        (["a", "a"], [], None, "listed twice"),
        ("ab", [], {"z": PRIOR}, "initial ratings for unknown"),
        ("ab", [{"a": 1}], None, "at least 2"),
    ],
)
def test_replay_rejects_bad_input(
    entrants: str | list[str], results: list[dict[str, int]], initial: dict[str, tuple[float, float]] | None, message: str
) -> None:
    with pytest.raises(ValueError, match=message):
        replay_ratings(ENV, entrants, results, initial)


def test_stronger_probability_leaves_out_match_noise_and_is_symmetric() -> None:
    from polignac_arena.ratings import stronger_probability

    a, b = (27.0, 1.0), (25.0, 1.0)
    assert stronger_probability(a, b) + stronger_probability(b, a) == pytest.approx(1.0)
    # A 2-point gap with sigma 1 each: Phi(2 / sqrt 2) = 0.921, far surer than one match's odds.
    assert stronger_probability(a, b) == pytest.approx(0.9214, abs=1e-4)
    assert stronger_probability(a, b) > win_probability(RatingEnv(), a, b)
    with pytest.raises(ValueError, match="stronger_probability"):
        stronger_probability((25.0, 0.0), b)
