"""League files: defaults, every problem named with its key and line, TLS required off loopback."""

from __future__ import annotations

from pathlib import Path

import pytest

from polignac_arena.executors import ExecutorError
from polignac_arena.league.config import is_loopback, load_league_config, parse_league_config
from polignac_arena.league.serve import run_league
from polignac_arena.seats import SeatKind
from polignac_arena.tournament.config import ConfigError
from tests.aio import run_sync


def test_an_empty_league_file_has_sane_defaults(tmp_path: Path) -> None:
    config = parse_league_config("", tmp_path / "league.toml")
    assert config.name == "league" and config.table_size == 4 and config.rules.players == 4
    assert config.store == tmp_path / "league.db" and config.data == tmp_path / "league-data"
    assert str(config.http) == "127.0.0.1:8080" and str(config.grpc) == "127.0.0.1:50051" and not config.tls
    assert config.seat_kind is SeatKind.PROCESS and config.reattach_grace_s == 10 and config.drain_s == 30


def test_every_problem_is_reported_with_its_key_and_line(tmp_path: Path) -> None:
    text = "\n".join(
        [
            'name = "a b"',  # 1
            "table_size = 9",  # 2
            "colour = 1",  # 3
            "[http]",  # 4
            'address = "nowhere"',  # 5
            "[limits]",  # 6
            "uploads_per_hour = 0",  # 7
            "[seats]",  # 8
            'kind = "inprocess"',  # 9
            "[remote]",  # 10
            "reattach_grace_s = -1",  # 11
            "[tls]",  # 12
            'cert = "missing.pem"',  # 13
        ]
    )
    with pytest.raises(ConfigError) as info:
        parse_league_config(text, tmp_path / "league.toml")
    problems = "\n".join(info.value.problems)
    for expected in (
        "line 1: 'name'",
        "line 2: 'table_size': must be an integer in 3..6, got 9",
        "line 3: 'colour': unknown setting",
        "line 5: 'http.address': must be 'host:port'",
        "line 7: 'limits.uploads_per_hour'",
        "line 9: 'seats.kind': must be process or docker in a league",
        "line 11: 'remote.reattach_grace_s'",
        "'tls.key': give both cert and key, or neither",
        "line 13: 'tls.cert': no such file",
    ):
        assert expected in problems, (expected, problems)


@pytest.mark.parametrize("address", ["0.0.0.0:8080", "192.0.2.7:1", "[2001:db8::1]:443", "example.org:443"])
def test_plaintext_is_refused_off_loopback(tmp_path: Path, address: str) -> None:
    with pytest.raises(ConfigError, match="is not a loopback address: give \\[tls\\] cert and key"):
        parse_league_config(f'[grpc]\naddress = "{address}"\n', tmp_path / "league.toml")


def test_with_tls_any_address_is_served(tmp_path: Path) -> None:
    (tmp_path / "c.pem").write_text("x")
    (tmp_path / "k.pem").write_text("x")
    config = parse_league_config('[http]\naddress = "0.0.0.0:0"\n[tls]\ncert = "c.pem"\nkey = "k.pem"\n', tmp_path / "league.toml")
    assert config.tls and config.tls_cert == tmp_path / "c.pem" and config.http.port == 0


@pytest.mark.parametrize(
    ("host", "loopback"),
    [
        ("127.0.0.1", True),
        ("127.9.9.9", True),
        ("::1", True),
        ("[::1]", True),
        ("localhost", True),
        ("0.0.0.0", False),
        ("10.0.0.1", False),
        ("local", False),
    ],
)
def test_loopback_hosts(host: str, loopback: bool) -> None:
    assert is_loopback(host) is loopback


def test_a_file_that_is_not_toml_or_not_there_is_one_clear_problem(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="cannot read the file"):
        load_league_config(tmp_path / "absent.toml")
    (tmp_path / "bad.toml").write_text("[[[")
    with pytest.raises(ConfigError, match="not valid TOML"):
        load_league_config(tmp_path / "bad.toml")


def test_the_docs_list_every_limit_with_its_default() -> None:
    """docs/league.md's table of limits names each key of the league file's limit tables, with the code's default."""
    import dataclasses
    import re

    from polignac_arena.league.limits import LIMIT_TABLES

    docs = (Path(__file__).resolve().parents[2] / "docs" / "league.md").read_text(encoding="utf-8")
    listed = {(m[1], m[2]): m[3] for m in re.finditer(r"^\| `\[(\w+)\] (\w+)` \| ([^|]+?) \|", docs, re.MULTILINE)}
    for section, cls in LIMIT_TABLES.items():
        for spec in dataclasses.fields(cls):
            if "key" in spec.metadata:  # set elsewhere, by the key it names
                continue
            default = spec.default
            shown = "`[]`" if default == () else f"{default:g}" if isinstance(default, float) else str(default)
            assert listed.get((section, spec.name)) == shown, (section, spec.name, listed.get((section, spec.name)), shown)
    parsed = parse_league_config("", Path("league.toml"))
    assert parsed.author_limits == LIMIT_TABLES["limits"]() and parsed.http_limits == LIMIT_TABLES["http"]()


def test_limits_are_read_with_their_bounds(tmp_path: Path) -> None:
    lines = ["[http]", "max_connections = 0", "trusted_proxies = ['10.0.0.1/8', 'nonsense']", "[grpc]", "idle_timeout_s = 5"]
    lines += ["[limits]", "disk_mb = 5", "bots = 'many'", "[validation]", "workers = 3", "surprise = 1"]
    text = "\n".join(lines) + "\n"
    with pytest.raises(ConfigError) as info:
        parse_league_config(text, tmp_path / "league.toml")
    problems = "\n".join(info.value.problems)
    for expected in (
        "line 2: 'http.max_connections': must be an integer in 1..100000, got 0",
        "line 3: 'http.trusted_proxies': 'nonsense' is not an IP address or network",
        "line 8: 'limits.bots': must be an integer",
        "line 11: 'validation.surprise': unknown setting",
    ):
        assert expected in problems, (expected, problems)
    config = parse_league_config(
        text.replace("max_connections = 0", "max_connections = 9")
        .replace(", 'nonsense'", "")
        .replace("bots = 'many'\n", "")
        .replace("surprise = 1\n", ""),
        tmp_path / "league.toml",
    )
    assert config.http_limits.max_connections == 9 and config.http_limits.trusted_proxies == ("10.0.0.0/8",)
    assert config.grpc_limits.idle_timeout_s == 5.0 and config.author_limits.disk_mb == 5 and config.validation.workers == 3


def test_referee_processes_default_to_the_league_process_and_take_their_settings(tmp_path: Path) -> None:
    config = parse_league_config('name = "x"\n', tmp_path / "league.toml")
    assert config.referees.processes == 1 and not config.referees.enabled, "resumable after a restart unless asked"
    text = '[referees]\nprocesses = 3\nmatches_per_process = 4\nfirst_port = 50100\npublic_host = "league.example"\nhang_s = 5\n'
    referees = parse_league_config(text, tmp_path / "league.toml").referees
    assert (referees.processes, referees.matches_per_process, referees.first_port, referees.public_host, referees.hang_s) == (
        3,
        4,
        50100,
        "league.example",
        5.0,
    )
    assert referees.enabled
    for off in (0, 1):
        assert not parse_league_config(f"[referees]\nprocesses = {off}\n", tmp_path / "league.toml").referees.enabled


@pytest.mark.parametrize(
    ("lines", "problem"),
    [
        ("processes = -1", "processes"),
        ("processes = 65", "processes"),
        ('processes = "many"', "processes"),
        ("matches_per_process = 0", "matches_per_process"),
        ("hang_s = 0", "hang_s"),
        ("first_port = 70000", "first_port"),
        ("first_port = 50050\nprocesses = 2", "include the \\[grpc\\] port 50051"),
        ("surprise = 1", "surprise"),
    ],
)
def test_bad_referee_settings_are_refused_with_their_key(tmp_path: Path, lines: str, problem: str) -> None:
    with pytest.raises(ConfigError, match=problem):
        parse_league_config(f"[referees]\n{lines}\n", tmp_path / "league.toml")


def test_a_wildcard_grpc_host_needs_a_public_host_for_the_referee_processes(tmp_path: Path) -> None:
    cert = tmp_path / "c.pem"
    cert.write_text("x")
    tls = '[tls]\ncert = "c.pem"\nkey = "c.pem"\n[http]\naddress = "0.0.0.0:0"\n[grpc]\naddress = "0.0.0.0:50051"\n'
    with pytest.raises(ConfigError, match="public_host"):
        parse_league_config(tls + "[referees]\nprocesses = 2\n", tmp_path / "league.toml")
    config = parse_league_config(tls + '[referees]\nprocesses = 2\npublic_host = "league.example"\n', tmp_path / "league.toml")
    assert config.referees.public_host == "league.example"
    assert not parse_league_config(tls + "[referees]\nprocesses = 1\n", tmp_path / "league.toml").referees.enabled
    # A file that says nothing of referees starts as before: in the league process.
    assert parse_league_config(tls, tmp_path / "league.toml").referees.processes == 1


def test_referees_on_ray_nodes_are_off_by_default_and_need_tls_off_loopback(tmp_path: Path) -> None:
    file = tmp_path / "league.toml"
    assert not parse_league_config("", file).referees.on_ray_nodes
    on_loopback = '[executor]\nkind = "ray"\naddress = "127.0.0.1:6379"\n[referees]\non_ray_nodes = true\n'
    referees = parse_league_config(on_loopback, file).referees
    assert referees.on_ray_nodes and referees.enabled and referees.processes == 1 and referees.cpus_per_referee == 1.0
    assert parse_league_config(on_loopback + "processes = 3\ncpus_per_referee = 0.5\n", file).referees.processes == 3
    # Off loopback (or with the address left to RAY_ADDRESS) a node would serve plaintext: refused without [tls].
    for executor in ('kind = "ray"\naddress = "10.0.0.5:6379"', 'kind = "ray"'):
        with pytest.raises(ConfigError, match="on_ray_nodes"):
            parse_league_config(f"[executor]\n{executor}\n[referees]\non_ray_nodes = true\n", file)
    cert = tmp_path / "c.pem"
    cert.write_text("x")
    tls = '[tls]\ncert = "c.pem"\nkey = "c.pem"\n[grpc]\naddress = "0.0.0.0:50051"\n[http]\naddress = "0.0.0.0:0"\n'
    wide = parse_league_config(tls + '[executor]\nkind = "ray"\n[referees]\non_ray_nodes = true\n', file)
    assert wide.referees.on_ray_nodes, "each node names itself: no public_host needed with a wildcard [grpc] host"
    executor = '[executor]\nkind = "ray"\naddress = "127.0.0.1:6379"\n[referees]\n'
    bad = [("on_ray_nodes = true\nprocesses = 0", "processes"), ("on_ray_nodes = true\ncpus_per_referee = 0", "cpus_per_referee")]
    bad.append(('on_ray_nodes = true\npublic_host = "league.example"', "POLIGNAC_REFEREE_HOST"))
    for lines, problem in [*bad, ("on_ray_nodes = 1", "on_ray_nodes")]:
        with pytest.raises(ConfigError, match=problem):
            parse_league_config(f"{executor}{lines}\n", file)


def test_referees_on_ray_nodes_without_the_ray_executor_stop_the_league_at_start(tmp_path: Path) -> None:
    config = parse_league_config('[executor]\naddress = "127.0.0.1:6379"\n[referees]\non_ray_nodes = true\n', tmp_path / "league.toml")
    with pytest.raises(ExecutorError, match="on_ray_nodes needs the ray executor"):
        run_sync(run_league(config))
    assert not (tmp_path / "league.db").exists(), "refused before anything is opened"
