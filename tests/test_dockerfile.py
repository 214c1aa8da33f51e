"""Dockerfile vetting (seats/dockerfile.py) without a daemon: what is refused, and what the daemon is sent."""

from __future__ import annotations

import dockerfile
import pytest

from polignac_arena.seats.dockerfile import BUILD_USER, DockerfileError, LocalImage, vet_dockerfile

ID = "sha256:" + "ab" * 32
HEX = "ab" * 32
LOCAL = {"busybox:1.36": LocalImage(id=ID, platform="linux/amd64"), "tools:1": LocalImage(id="sha256:" + "cd" * 32, platform="linux/amd64")}
IMAGES = {
    **LOCAL,
    "trig:1": LocalImage(id=ID, platform="linux/amd64", on_build=("ADD http://127.0.0.1/x /x",)),
    "vol:1": LocalImage(id=ID, platform="linux/amd64", volumes=("/data",)),
}


def vet(text: str) -> str:
    return vet_dockerfile(text, IMAGES.get).text


def instructions(text: str) -> list[str]:
    return [command.original for command in dockerfile.parse_string(text)]


@pytest.mark.parametrize(
    "text",
    [
        "FROM \\\n\nbusybox:1.36\n",  # the bypass: an empty line inside a continuation
        "FROM \\\n# a comment\nbusybox:1.36\n",
        "# escape=`\nFROM `\n\nbusybox:1.36\n",
        "ARG BASE=busybox:1.36\nFROM $BASE\n",
        "ARG BASE=busybox\nARG TAG=1.36\nFROM --platform=linux/amd64 ${BASE}:${TAG}\n",
        "ARG BASE\nFROM ${BASE:-busybox:1.36}\n",
        "from busybox:1.36\n",
    ],
)
def test_every_spelling_of_a_local_base_is_found_and_pinned(text: str) -> None:
    vetted = vet_dockerfile(text, IMAGES.get)
    assert vetted.images == {"busybox:1.36": ID}
    assert [line for line in instructions(vetted.text) if line.upper().startswith("FROM")] == [f"FROM {HEX}"]


@pytest.mark.parametrize(
    "text, message",
    [
        ("FROM \\\n\nbusybox:9\n", "line 1: the image 'busybox:9' is not on this machine"),
        ("ARG BASE=evil:1\nFROM --platform=linux/amd64 $BASE\n", "line 2: the image 'evil:1' is not on this machine"),
        ("FROM $UNSET\n", "FROM names no image"),
        ("FROM --platform=linux/arm64 busybox:1.36\n", "is for linux/amd64, not linux/arm64"),
        ("FROM busybox:1.36\nCOPY --from=127.0.0.1:5000/evil:1 /x /x\n", "the image '127.0.0.1:5000/evil:1' is not on this machine"),
        ("FROM busybox:1.36\nCOPY --from=$IMG /x /x\n", "COPY --from must name a stage or an image plainly"),
        ("FROM trig:1\n", "has ONBUILD triggers"),
        ("FROM vol:1\n", "declares volumes (/data)"),
        ("FROM scratch\nADD http://127.0.0.1:8000/secret /secret\n", "line 2: ADD is not allowed"),
        ("FROM scratch\nadd http://127.0.0.1:8000/secret /secret\n", "line 2: ADD is not allowed"),
        ('FROM scratch\nADD ["http://127.0.0.1:8000/secret", "/secret"]\n', "ADD is not allowed"),
        ("FROM scratch\nADD \\\n  # hidden\n  http://127.0.0.1/s /s\n", "line 2: ADD is not allowed"),
        ("FROM scratch\nADD --checksum=sha256:00 http://127.0.0.1/s /s\n", "ADD is not allowed"),
        ("FROM scratch\nADD local.tar /\n", "ADD is not allowed"),
        ("FROM busybox:1.36\nRUN --mount=type=secret,id=s cat /run/secrets/s\n", "RUN takes no flags"),
        ("FROM busybox:1.36\nRUN --mount=type=ssh ssh-add -l\n", "RUN takes no flags"),
        ("FROM busybox:1.36\nRUN --network=host wget x\n", "RUN takes no flags"),
        ("FROM busybox:1.36\nRUN <<EOF\nADD http://127.0.0.1/s /s\nEOF\n", "heredocs are not allowed"),
        ("FROM busybox:1.36\nCOPY <<EOF /x\nhello\nEOF\n", "heredocs are not allowed"),
        ("FROM busybox:1.36\nONBUILD RUN echo\n", "ONBUILD is not allowed"),
        ("FROM busybox:1.36\nVOLUME /data\n", "VOLUME is not allowed"),
        ("FROM busybox:1.36\nUSER root\n", "USER must be a numeric uid"),
        ("FROM busybox:1.36\nUSER 0\n", "may not run as root"),
        ("FROM busybox:1.36\nUSER 1000:0\n", "may not run as root"),
        ("FROM busybox:1.36\nCOPY --link a /a\n", "COPY takes only --chown and --from"),
        ("FROM busybox:1.36\nCOPY --chmod=4755 a /a\n", "COPY takes only --chown and --from"),
        ("FROM busybox:1.36\nFOO bar\n", "unknown instruction 'FOO'"),
        ("RUN echo\n", "RUN before the first FROM"),
        ("# just a comment\n", "does not parse"),
        ("ARG X=1\n", "has no FROM"),
    ],
)
def test_what_is_refused_names_the_line_and_the_reason(text: str, message: str) -> None:
    with pytest.raises(DockerfileError, match=message.replace("(", r"\(").replace(")", r"\)").replace("$", r"\$")):
        vet(text)


def test_the_daemon_gets_one_instruction_per_line_pinned_and_as_nobody() -> None:
    text = (
        "# escape=`\n"
        "ARG BASE=busybox:1.36\n"
        "FROM $BASE AS build\n"
        "COPY --chown=65534:65534 . /src\n"
        "RUN make -C /src `\n"
        "    all\n"
        "FROM scratch\n"
        "COPY --from=build /src/bot /bot\n"
        "COPY --from=tools:1 /bin/tool /tool\n"
        'CMD ["/bot"]\n'
    )
    assert vet(text).splitlines() == [
        "# escape=`",
        "ARG BASE=busybox:1.36",
        f"FROM {HEX} AS build",
        f"USER {BUILD_USER}",
        "COPY --chown=65534:65534 . /src",
        "RUN make -C /src     all",
        "FROM scratch",
        f"USER {BUILD_USER}",
        "COPY --from=build /src/bot /bot",
        f"COPY --from={'cd' * 32} /bin/tool /tool",
        'CMD ["/bot"]',
    ]


def test_a_numeric_user_other_than_root_is_kept_after_the_arenas() -> None:
    lines = vet("FROM scratch\nUSER 1000:1000\n").splitlines()
    assert lines[-2:] == [f"USER {BUILD_USER}", "USER 1000:1000"]


def test_a_huge_dockerfile_is_refused_before_parsing() -> None:
    with pytest.raises(DockerfileError, match="bytes, more than the"):
        vet("FROM scratch\n" + "LABEL a=b\n" * 40_000)
