"""Tournament files: every shipped file loads, and a bad file gets one error line per problem,
each naming its key and its line; through the command line, a bad file runs nothing."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from typer.testing import CliRunner, Result

from polignac_arena.cli import app
from polignac_arena.seats import SeatKind
from polignac_arena.store import Store
from polignac_arena.templates import scaffold
from polignac_arena.tournament.config import ConfigError, load_config, parse_config
from polignac_arena.tournament.runner import resolve_entrants

ROOT = Path(__file__).resolve().parents[1]
SHIPPED = sorted((ROOT / "tournaments").glob("*.toml"))
ENV = {"COLUMNS": "200", "NO_COLOR": "1"}

GOOD = """\
name = "t"
entrants = ["random", "cautious", "heuristic"]
table_size = 3
"""


def problems_of(text: str) -> list[str]:
    with pytest.raises(ConfigError) as caught:
        parse_config(text, "/tmp/t.toml")
    return caught.value.problems


def line_of(text: str, fragment: str) -> int:
    """The 1-based number of the only line of ``text`` holding ``fragment``."""
    found = [n for n, line in enumerate(text.splitlines(), start=1) if fragment in line]
    assert len(found) == 1, (fragment, found)
    return found[0]


# -- the shipped files -----------------------------------------------------------------------


def test_there_are_shipped_tournaments() -> None:
    names = {path.stem for path in SHIPPED}
    assert {"quickstart", "classic-league"} <= names
    assert len(SHIPPED) >= 6  # one per variant too


def _staged(path: Path, tmp_path: Path) -> Path:
    """``path`` as shipped, or, for the file of the starter kits, a copy beside the kits it names, made fresh.

    tournaments/languages.toml seats ../build/kits/LANG-kit, which benchmarks/kits.py makes (and builds); loading it
    needs only each kit's folder, which `polignac bot new` writes.
    """
    if path.stem != "languages":
        return path
    copy = tmp_path / "tournaments" / path.name
    copy.parent.mkdir(parents=True, exist_ok=True)
    copy.write_text(path.read_text(encoding="utf-8"), encoding="utf-8")
    for entrant in load_config(copy).entrants:
        folder = (copy.parent / entrant).resolve()
        if not folder.exists():
            scaffold(folder.name, folder.name.removesuffix("-kit"), folder)
    return copy


@pytest.mark.parametrize("path", SHIPPED, ids=[p.stem for p in SHIPPED])
def test_every_shipped_tournament_loads_and_its_entrants_resolve(path: Path, tmp_path: Path) -> None:
    path = _staged(path, tmp_path)
    config = load_config(path)
    assert config.name == path.stem
    assert config.source == path.read_text(encoding="utf-8")
    assert len(config.entrants) >= config.table_size == config.rules.players
    with Store(tmp_path / "arena.db") as store:
        entrants = resolve_entrants(config, store)
        assert len(entrants) == len(config.entrants)
        assert {bot.key for bot in store.list_bots()} == set(entrants)


def test_all_shipped_tournaments_can_share_one_store(tmp_path: Path) -> None:
    """The README's quickstart (sample bot folders) and the other files (built-in bots) in one store."""
    with Store(tmp_path / "arena.db") as store:
        for path in SHIPPED:
            resolve_entrants(load_config(_staged(path, tmp_path)), store)
        keys = [bot.key for bot in store.list_bots()]
    assert len(keys) == len(set(keys)) >= 6


def test_quickstart_is_short_and_trusted() -> None:
    config = load_config(ROOT / "tournaments" / "quickstart.toml")
    assert config.format == "round-robin" and config.parallel == 2
    assert config.seat_kind is SeatKind.PROCESS and config.trusted


def test_defaults() -> None:
    config = parse_config(GOOD, "/somewhere/t.toml")
    assert config.name == "t"
    assert config.entrants == ("random", "cautious", "heuristic")
    assert config.format == "round-robin" and config.rounds == 1 and config.seed == 1 and config.parallel == 1
    assert config.seat_kind is SeatKind.PROCESS and config.trusted is False
    assert config.base_dir == Path("/somewhere")
    assert config.trueskill.mu == 25.0 and config.trueskill.sigma == pytest.approx(25 / 3)


# -- one problem, one line -----------------------------------------------------------------

SINGLE = [
    # (id, text appended to GOOD or replacing it, the key the problem names, the fragment of its line)
    ("unknown top-level key", GOOD + 'colour = "blue"\n', "colour", "colour"),
    ("unknown [time] key", GOOD + "[time]\ntick = 3\n", "time.tick", "tick"),
    ("unknown [seats] key", GOOD + "[seats]\nextra = 1\n", "seats.extra", "extra"),
    ("unknown [seats.limits] key", GOOD + "[seats.limits]\ngpu = 1\n", "seats.limits.gpu", "gpu"),
    ("unknown [trueskill] key", GOOD + "[trueskill]\ngamma = 2\n", "trueskill.gamma", "gamma"),
    ("unknown [rules] key", GOOD + "[rules]\nfrobnicate = 1\n", "rules.frobnicate", "frobnicate"),
    ("name not text", GOOD.replace('"t"', "5"), "name", "name ="),
    ("bad name", GOOD.replace('"t"', '"two words"'), "name", "name ="),
    ("description not text", GOOD + "description = 5\n", "description", "description"),
    ("entrants not a list", GOOD.replace('["random", "cautious", "heuristic"]', '"random"'), "entrants", "entrants"),
    ("empty entrants", GOOD.replace('["random", "cautious", "heuristic"]', "[]"), "entrants", "entrants"),
    ("duplicate entrants", GOOD.replace('"cautious"', '"random"'), "entrants", "entrants"),
    ("bad format", GOOD + 'format = "swiss"\n', "format", "format"),
    ("table_size not an integer", GOOD.replace("table_size = 3", "table_size = 3.0"), "table_size", "table_size"),
    ("table_size too big", GOOD.replace("table_size = 3", "table_size = 7"), "table_size", "table_size"),
    ("table_size > entrants", GOOD.replace("table_size = 3", "table_size = 4"), "table_size", "table_size"),
    ("rounds zero", GOOD + "rounds = 0\n", "rounds", "rounds"),
    ("rounds a string", GOOD + 'rounds = "3"\n', "rounds", "rounds"),
    ("rounds a bool", GOOD + "rounds = true\n", "rounds", "rounds"),
    ("matches zero", GOOD + "matches = 0\n", "matches", "matches"),
    ("negative seed", GOOD + "seed = -1\n", "seed", "seed"),
    ("seed past 2**64-1", GOOD + "seed = 18446744073709551616\n", "seed", "seed"),
    ("parallel too big", GOOD + "parallel = 65\n", "parallel", "parallel"),
    ("move_ms zero", GOOD + "[time]\nmove_ms = 0\n", "time.move_ms", "move_ms"),
    ("bank_ms a string", GOOD + '[time]\nbank_ms = "x"\n', "time.bank_ms", "bank_ms"),
    ("startup_ms a float", GOOD + "[time]\nstartup_ms = 1.5\n", "time.startup_ms", "startup_ms"),
    ("bad seat kind", GOOD + '[seats]\nkind = "vm"\n', "seats.kind", "kind"),
    ("trusted not a bool", GOOD + '[seats]\ntrusted = "yes"\n', "seats.trusted", "trusted"),
    ("memory_mb too small", GOOD + "[seats.limits]\nmemory_mb = 1\n", "seats.limits.memory_mb", "memory_mb"),
    ("cpus zero", GOOD + "[seats.limits]\ncpus = 0\n", "seats.limits.cpus", "cpus"),
    ("pids a bool", GOOD + "[seats.limits]\npids = true\n", "seats.limits.pids", "pids"),
    ("limit negative", GOOD + "[rules]\nlimit = -3\n", "rules.limit", "limit"),
    ("limit a string", GOOD + '[rules]\nlimit = "x"\n', "rules.limit", "limit"),
    ("bad fault policy", GOOD + '[rules]\nfault_policy = "nope"\n', "rules.fault_policy", "fault_policy"),
    ("players against table_size", GOOD + "[rules]\nplayers = 4\n", "rules.players", "players"),
    ("trueskill mu a string", GOOD + '[trueskill]\nmu = "a"\n', "trueskill.mu", "mu ="),
    ("trueskill sigma zero", GOOD + "[trueskill]\nsigma = 0\n", "trueskill.sigma", "sigma"),
    ("trueskill beta negative", GOOD + "[trueskill]\nbeta = -1\n", "trueskill.beta", "beta"),
    ("trueskill tau negative", GOOD + "[trueskill]\ntau = -0.1\n", "trueskill.tau", "tau"),
    ("draw probability 1", GOOD + "[trueskill]\ndraw_probability = 1.0\n", "trueskill.draw_probability", "draw_probability"),
]


SINGLE_PARAMS = [pytest.param(*case[1:], id=case[0]) for case in SINGLE] + [
    pytest.param(GOOD + '[rules]\nvariant = "nope"\n', "rules.variant", "variant", id="bad variant"),
    pytest.param(GOOD + '[rules]\nvariant = "nope"\nlimit = 5\n', "rules.variant", "variant", id="bad variant, good limit"),
]


@pytest.mark.parametrize(("text", "key", "fragment"), SINGLE_PARAMS)
def test_one_problem_is_one_line_with_its_key_and_line(text: str, key: str, fragment: str) -> None:
    problems = problems_of(text)
    assert len(problems) == 1, problems
    assert problems[0].startswith(f"line {line_of(text, fragment)}: {key!r}: "), problems
    assert "\n" not in problems[0]


def test_the_error_message_lists_the_file_and_every_problem() -> None:
    text = GOOD + "rounds = 0\nparallel = 0\n"
    with pytest.raises(ConfigError) as caught:
        parse_config(text, "/tmp/t.toml")
    message = str(caught.value)
    assert message.startswith("/tmp/t.toml: 2 problem(s):")
    assert message.count("\n") == 2
    assert caught.value.path == Path("/tmp/t.toml")


# Each bad line of this file is one problem: (line, the key its problem names).
MANY = [
    ('name = "bad name!"', "name"),
    ("description = 5", "description"),
    ('entrants = ["random", "random", "cautious", "heuristic"]', "entrants"),
    ('format = "swiss"', "format"),
    ("table_size = 9", "table_size"),
    ("rounds = 0", "rounds"),
    ('matches = "ten"', "matches"),
    ("seed = -1", "seed"),
    ("parallel = 100", "parallel"),
    ('colour = "blue"', "colour"),
    ("[rules]", None),
    ("limit = -3", "rules.limit"),
    ("[time]", None),
    ("move_ms = 0", "time.move_ms"),
    ('bank_ms = "x"', "time.bank_ms"),
    ("startup_ms = 1.5", "time.startup_ms"),
    ("tick = 3", "time.tick"),
    ("[seats]", None),
    ('kind = "vm"', "seats.kind"),
    ('trusted = "yes"', "seats.trusted"),
    ("extra = 1", "seats.extra"),
    ("[seats.limits]", None),
    ("memory_mb = 1", "seats.limits.memory_mb"),
    ("cpus = 0", "seats.limits.cpus"),
    ("pids = true", "seats.limits.pids"),
    ("gpu = 1", "seats.limits.gpu"),
    ("[trueskill]", None),
    ('mu = "a"', "trueskill.mu"),
    ("sigma = 0", "trueskill.sigma"),
    ("beta = -1", "trueskill.beta"),
    ("tau = -0.1", "trueskill.tau"),
    ("draw_probability = 1.0", "trueskill.draw_probability"),
    ("gamma = 2", "trueskill.gamma"),
]


def test_a_file_with_many_problems_gets_one_line_per_problem(tmp_path: Path) -> None:
    path = tmp_path / "bad.toml"
    path.write_text("".join(line + "\n" for line, _ in MANY), encoding="utf-8")
    with pytest.raises(ConfigError) as caught:
        load_config(path)
    problems = caught.value.problems
    expected = [(number, key) for number, (_, key) in enumerate(MANY, start=1) if key is not None]
    assert len(problems) == len(expected), "\n".join(problems)
    for number, key in expected:
        mine = [p for p in problems if p.startswith(f"line {number}: {key!r}: ")]
        assert len(mine) == 1, (number, key, problems)
    assert all("\n" not in p for p in problems)
    assert str(caught.value).startswith(f"{path}: {len(expected)} problem(s):")


def test_several_bad_rules_values_are_several_problems() -> None:
    text = GOOD + '[rules]\nlimit = -3\nfrobnicate = 1\nfault_policy = "x"\n'
    problems = problems_of(text)
    assert len(problems) == 3, problems
    for key in ("limit", "frobnicate", "fault_policy"):
        assert sum(p.startswith(f"line {line_of(text, key)}: 'rules.{key}': ") for p in problems) == 1, problems


def test_several_bad_rules_values_with_a_bad_variant_are_several_problems() -> None:
    text = GOOD + '[rules]\nvariant = "nope"\nlimit = -3\nfrobnicate = 1\n'
    problems = problems_of(text)
    keys = [m.group(1) for p in problems if (m := re.match(r"line \d+: '([a-z_.]+)'", p))]
    assert sorted(keys) == ["rules.frobnicate", "rules.limit", "rules.variant"], problems
    assert sum("'variant'" in p for p in problems) == 1, problems


@pytest.mark.parametrize(
    ("text", "fragment"),
    [
        pytest.param(GOOD + "rules = 5\n", "rules = 5", id="a section given as a value"),
        pytest.param(GOOD + 'seats = { kind = "vm" }\n', "seats = {", id="an inline table"),
        pytest.param(GOOD + 'seats.kind = "vm"\n', "seats.kind", id="a dotted key at the top"),
        pytest.param(GOOD + "[seats.foo]\nx = 1\n", "[seats.foo]", id="an unknown sub-table"),
        pytest.param(GOOD + "[rules.foo]\nx = 1\n", "[rules.foo]", id="a sub-table of [rules]"),
        pytest.param(GOOD + "[seats]\nlimits.memory_mb = 1\n", "limits.memory_mb", id="a dotted key in a section"),
    ],
)  # fmt: skip
def test_problems_in_other_toml_spellings_have_their_line(text: str, fragment: str) -> None:
    problems = problems_of(text)
    assert len(problems) == 1, problems
    assert problems[0].startswith(f"line {line_of(text, fragment)}: "), problems


def test_a_missing_required_key_is_named() -> None:
    problems = problems_of('entrants = ["random", "cautious", "heuristic"]\ntable_size = 3\n')
    assert len(problems) == 1 and "'name'" in problems[0]
    problems = problems_of('name = "t"\n')
    assert len(problems) == 1 and "'entrants'" in problems[0]


# -- not a tournament file at all ----------------------------------------------------------


def test_not_toml_is_one_problem_with_its_line(tmp_path: Path) -> None:
    path = tmp_path / "t.toml"
    path.write_text('name = "t"\nentrants = ["random"]\nthis is not toml\n', encoding="utf-8")
    with pytest.raises(ConfigError) as caught:
        load_config(path)
    assert len(caught.value.problems) == 1
    assert caught.value.problems[0].startswith("not valid TOML: ")
    assert "line 3" in caught.value.problems[0]


def test_not_utf8_is_one_problem(tmp_path: Path) -> None:
    path = tmp_path / "t.toml"
    path.write_bytes(b'name = "caf\xe9"\nentrants = ["random", "cautious", "heuristic"]\n')
    with pytest.raises(ConfigError) as caught:
        load_config(path)
    assert caught.value.problems == ["not a UTF-8 text file"]


def test_a_missing_file_is_one_problem(tmp_path: Path) -> None:
    with pytest.raises(ConfigError) as caught:
        load_config(tmp_path / "nope.toml")
    assert len(caught.value.problems) == 1
    assert "cannot read the file" in caught.value.problems[0] and "No such file" in caught.value.problems[0]


def test_a_folder_is_one_problem(tmp_path: Path) -> None:
    with pytest.raises(ConfigError) as caught:
        load_config(tmp_path)
    assert len(caught.value.problems) == 1 and "cannot read the file" in caught.value.problems[0]


# -- through the command line: exit 2, one line, nothing run ---------------------------------


def polignac(*args: str) -> Result:
    return CliRunner().invoke(app, list(args), env=ENV, catch_exceptions=False)


def tournaments_in(db: Path) -> list[str]:
    if not db.exists():
        return []
    with Store(db, create=False) as store:
        return [t.name for t in store.list_tournaments()]


def test_run_with_a_bad_file_exits_2_and_runs_nothing(tmp_path: Path) -> None:
    path = tmp_path / "bad.toml"
    path.write_text("".join(line + "\n" for line, _ in MANY), encoding="utf-8")
    db = tmp_path / "arena.db"
    result = polignac("tournament", "run", str(path), "--db", str(db), "-q")
    assert result.exit_code == 2, result.output
    assert result.stdout == ""
    lines = result.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith("polignac: error: "), result.stderr
    for number, (_, key) in enumerate(MANY, start=1):
        if key is not None:
            assert f"line {number}: {key!r}:" in lines[0]
    assert not db.exists()


@pytest.mark.parametrize(
    "content",
    [pytest.param(None, id="missing"), pytest.param(b"\xff\xfe not utf-8", id="not utf-8"), pytest.param(b"= = =", id="not toml")],
)
def test_run_with_an_unreadable_file_exits_2(tmp_path: Path, content: bytes | None) -> None:
    path = tmp_path / "t.toml"
    if content is not None:
        path.write_bytes(content)
    db = tmp_path / "arena.db"
    result = polignac("tournament", "run", str(path), "--db", str(db))
    assert result.exit_code == 2
    assert len(result.stderr.splitlines()) == 1 and result.stderr.startswith("polignac: error: "), result.stderr
    assert str(path) in result.stderr
    assert not db.exists()


def test_a_bad_file_leaves_an_existing_store_untouched(tmp_path: Path) -> None:
    db = tmp_path / "arena.db"
    Store(db).close()
    path = tmp_path / "bad.toml"
    path.write_text(GOOD + "rounds = 0\n", encoding="utf-8")
    result = polignac("tournament", "run", str(path), "--db", str(db), "-q")
    assert result.exit_code == 2 and "'rounds'" in result.stderr
    assert tournaments_in(db) == []
    with Store(db, create=False) as store:
        assert store.list_bots() == []
