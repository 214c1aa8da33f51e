"""``polignac bot new`` and ``polignac bot proto``: the kits written, the protocol copied (tests/test_kits.py builds and plays them)."""

from __future__ import annotations

import fnmatch
import tomllib
from pathlib import Path

import pytest
from typer.testing import CliRunner, Result

from polignac_arena import protofiles
from polignac_arena.cli import app
from polignac_arena.seats.dockerfile import DockerfileError, LocalImage, vet_dockerfile
from polignac_arena.submission import load_submission
from polignac_arena.templates import PREPARE, TEMPLATE_LANGUAGES, WITH_PROTO, ScaffoldError, scaffold

ROOT = Path(__file__).resolve().parents[1]
TEMPLATES = ROOT / "server" / "polignac_arena" / "templates"
PROTO = ROOT / "proto" / "polignac" / "v1" / "referee.proto"
runner = CliRunner()


def polignac(*args: str) -> Result:
    return runner.invoke(app, list(args), catch_exceptions=False)


def test_new_defaults_to_python_in_a_folder_named_after_the_bot(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    result = polignac("bot", "new", "starter")
    assert result.exit_code == 0, result.output
    assert load_submission(tmp_path / "starter").language == "python"


def test_new_refuses_to_overwrite_and_checks_its_arguments(tmp_path: Path) -> None:
    taken = tmp_path / "taken"
    taken.mkdir()
    (taken / "bot.py").write_text("mine\n")
    result = polignac("bot", "new", "taken", "--dir", str(taken))
    assert result.exit_code == 2 and "not overwriting" in result.output
    assert (taken / "bot.py").read_text() == "mine\n" and not (taken / "bot.toml").exists()
    a_file = tmp_path / "file"
    a_file.write_text("x")
    assert polignac("bot", "new", "x", "--dir", str(a_file)).exit_code == 2
    empty = tmp_path / "empty"
    empty.mkdir()
    assert polignac("bot", "new", "fine", "--lang", "c", "--dir", str(empty)).exit_code == 0  # an empty folder is filled
    bad = polignac("bot", "new", "no spaces", "--dir", str(tmp_path / "b"))
    assert bad.exit_code == 2 and "bot name" in bad.output and not (tmp_path / "b").exists()
    assert polignac("bot", "new", "x", "--lang", "cobol", "--dir", str(tmp_path / "c")).exit_code == 2
    with pytest.raises(ScaffoldError):
        scaffold("x", "cobol", tmp_path / "d")


def test_templates_are_package_data() -> None:
    """Every template file is matched by pyproject.toml's package-data, so an installed arena can scaffold."""
    config = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    patterns = config["tool"]["setuptools"]["package-data"]["polignac_arena.templates"]
    files = [p.relative_to(TEMPLATES).as_posix() for p in TEMPLATES.rglob("*") if p.is_file() and "__pycache__" not in p.parts]
    data = [f for f in files if f != "__init__.py"]
    assert {"python/bot.py", "javascript/package-lock.json", "c/bot.c", "c/gitignore"} <= set(data)
    unmatched = [f for f in data if not any(fnmatch.fnmatch(f, p) and f.count("/") == p.count("/") for p in patterns)]
    assert not unmatched, f"add these to [tool.setuptools.package-data] in pyproject.toml: {unmatched}"
    assert not [f for f in data if Path(f).name.startswith(".")], "dotfiles are skipped by packaging: store them without the dot"


def test_templates_follow_their_samples() -> None:
    """The starters are the sample bots with a name of their own: a fix to one belongs in the other."""
    samples = ROOT / "sample_bots"
    pairs = [
        (samples / "c_stdio" / "bot.c", TEMPLATES / "c" / "bot.c", "*/\n", "c-stdio"),  # below the header comment
        (samples / "javascript" / "bot.js", TEMPLATES / "javascript" / "bot.js", "const VERSION", "javascript"),  # below the name
    ]
    for sample, template, marker, name in pairs:
        body = sample.read_text().split(marker, 1)[1].split("\n", 1)[1]
        starter = template.read_text().replace("{{name}}", name).split(marker, 1)[1].split("\n", 1)[1]
        assert body == starter, f"{template} and {sample} differ"
    lock_sample = (samples / "javascript" / "package-lock.json").read_text()
    lock_template = (TEMPLATES / "javascript" / "package-lock.json").read_text()
    assert lock_sample.split('"node_modules/')[1:] == lock_template.split('"node_modules/')[1:]


@pytest.mark.parametrize("lang", TEMPLATE_LANGUAGES)
def test_every_language_makes_a_valid_submission_with_its_readme(lang: str, tmp_path: Path) -> None:
    folder = tmp_path / lang
    result = polignac("bot", "new", f"my.{lang}_bot", "--lang", lang, "--dir", str(folder))
    assert result.exit_code == 0, result.output
    submission = load_submission(folder)  # a name with '.' and '_' fits every kit: no kit puts it in a package name
    assert submission.name == f"my.{lang}_bot" and submission.language == lang
    assert (folder / "README.md").read_text().startswith(f"# my.{lang}_bot\n")
    assert ("Install its packages:" in result.output) == (lang in PREPARE)
    assert (folder / "proto" / "polignac" / "v1" / "referee.proto").read_bytes() == PROTO.read_bytes() if lang in WITH_PROTO else True
    assert not (folder / "proto").exists() or lang in WITH_PROTO


def test_new_lists_every_language_in_its_help() -> None:
    result = polignac("bot", "new", "--help")
    assert result.exit_code == 0
    assert all(lang in result.output for lang in TEMPLATE_LANGUAGES), result.output


def test_proto_copies_the_protocol_and_checks_a_copy(tmp_path: Path) -> None:
    folder = tmp_path / "bot"
    folder.mkdir()
    assert polignac("bot", "proto", str(folder), "--check").exit_code == 1  # none yet
    result = polignac("bot", "proto", str(folder))
    assert result.exit_code == 0 and "Wrote" in result.output
    copy = folder / "proto" / "polignac" / "v1" / "referee.proto"
    assert copy.read_bytes() == PROTO.read_bytes()
    checked = polignac("bot", "proto", str(folder), "--check")
    assert checked.exit_code == 0 and "holds this arena's protocol" in checked.output
    copy.write_text(copy.read_text() + "\n// an old copy\n")
    stale = polignac("bot", "proto", str(folder), "--check")
    assert stale.exit_code == 1 and "missing or not this arena's" in stale.output and "polignac bot proto" in stale.output
    assert polignac("bot", "proto", str(folder)).exit_code == 0 and copy.read_bytes() == PROTO.read_bytes()  # copied again
    missing = polignac("bot", "proto", str(tmp_path / "nowhere"))
    assert missing.exit_code == 2 and "not a folder" in missing.output
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    linked = tmp_path / "linked"
    linked.mkdir()
    (linked / "proto").symlink_to(elsewhere)  # a link out of the bot's folder is not written through
    refused = polignac("bot", "proto", str(linked))
    assert refused.exit_code == 2 and "is a symbolic link" in refused.output and not any(elsewhere.iterdir())


def test_the_arena_finds_its_protocol_files_when_installed(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A wheel carries proto/ as data files (pyproject.toml); without a checkout the arena reads them from there."""
    config = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    data = config["tool"]["setuptools"]["data-files"]
    assert data == {"share/polignac-arena/proto/polignac/v1": ["proto/polignac/v1/referee.proto"]}
    installed = tmp_path / "share" / "polignac-arena" / "proto"
    monkeypatch.setattr(protofiles, "_CHECKOUT", tmp_path / "no-checkout")
    monkeypatch.setattr(protofiles, "_INSTALLED", installed)
    with pytest.raises(protofiles.ProtoFilesMissing, match="reinstall polignac-arena"):
        protofiles.proto_root()
    (installed / "polignac" / "v1").mkdir(parents=True)
    (installed / "polignac" / "v1" / "referee.proto").write_bytes(PROTO.read_bytes())
    assert protofiles.proto_root() == installed


@pytest.mark.parametrize("lang", TEMPLATE_LANGUAGES)
def test_every_kit_dockerfile_passes_the_arenas_vetting_once_its_base_image_is_here(lang: str, tmp_path: Path) -> None:
    """The static kits' FROM scratch builds as it is; the others' builds once its author's base image is on the machine."""
    folder = tmp_path / lang
    assert polignac("bot", "new", "kit", "--lang", lang, "--dir", str(folder)).exit_code == 0
    text = (folder / "Dockerfile").read_text()
    local = LocalImage(id="sha256:" + "ab" * 32, platform="linux/amd64")
    vetted = vet_dockerfile(text, lambda reference: local)
    assert "USER 65534:65534" in vetted.text
    if "FROM scratch" in text:
        assert vetted.images == {} and load_submission(folder).dockerfile == "Dockerfile"
    else:  # an image of the author's: the arena never pulls it, and bot.toml does not name the Dockerfile until it is here
        assert len(vetted.images) == 1 and load_submission(folder).dockerfile is None
        with pytest.raises(DockerfileError, match="is not on this machine, and the arena never pulls images"):
            vet_dockerfile(text, lambda reference: None)
