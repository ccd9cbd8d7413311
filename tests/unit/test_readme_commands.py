"""Every command README.md shows runs as written, and the README stays a page a newcomer reads.

Each line of the README's shell blocks is split as the shell would split it
and checked against what it names: a make target and its variables, a Python
script or module (run with the README's own arguments when they only print, else
with ``--help``), a script, a Docker build's files and arguments, a curl call's
route and method. A program this file does not know fails, so a new kind of
command gets a check before it gets into the README. The curl walk-through runs
against the real service in tests/integration/test_readme_walkthrough.py.
"""

from __future__ import annotations

import importlib.util
import os
import re
import shlex
import subprocess
import sys
from urllib.parse import urlsplit

import orjson
import pytest

from influencer_stats.bootstrap.edge import ROUTES
from influencer_stats.bootstrap.slots import SLOTS
from influencer_stats.config.profiles import PROFILES
from influencer_stats.config.resolve import offered
from influencer_stats.settings import declared
from tests.readme_commands import README, ROOT, Command, commands_in, page_commands, shell_blocks
from tests.support import instead_of_slices

MAX_LINES = 200
PYTHONS = frozenset({"python", "python3", ".venv/bin/python"})
#: Arguments of main.py that print and exit: the README's line is run as it stands.
PRINTING = frozenset({"--help", "--version", "--list-profiles", "--list-choices", "--print-settings"})
#: The service's own entry points: other arguments are checked by resolving them (--print-settings).
SERVICE_ENTRIES = (["main.py"], ["-m", "influencer_stats"])
#: curl options that take a value (the next word).
CURL_VALUED = frozenset({"-X", "--request", "-H", "--header", "-d", "--data", "-o", "-w", "--max-time"})
#: Where `make run` listens: the address every curl line of the walk-through asks.
SERVICE = frozenset({"localhost:8080", "127.0.0.1:8080"})

COMMANDS = page_commands()


def by_program(*programs: str) -> list[Command]:
    return [command for command in COMMANDS if command.program in programs]


def makefile() -> str:
    return (ROOT / "Makefile").read_text()


def make_targets() -> set[str]:
    return set(re.findall(r"^([A-Za-z][\w.-]*):(?!=)", makefile(), re.MULTILINE))


def make_variables() -> set[str]:
    return set(re.findall(r"^([A-Z_]+)\s*[?:]?=", makefile(), re.MULTILINE))


def run(argv: list[str], env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        argv, cwd=ROOT, env={**os.environ, **env}, capture_output=True, text=True, timeout=60, check=False
    )


def known_variables() -> set[str]:
    return {spec.env for spec in declared().values()} | {slot.env for slot in SLOTS.values()}


def test_the_readme_is_a_page_a_newcomer_reads_to_the_end() -> None:
    lines = README.read_text().splitlines()

    assert len(lines) <= MAX_LINES, (
        f"README.md has {len(lines)} lines: move detail to docs/ (at most {MAX_LINES})"
    )


def test_the_readme_shows_the_two_commands_and_the_walk_through() -> None:
    argvs = [command.argv for command in COMMANDS]

    assert ("make", "run") in argvs
    assert ("make", "test") in argvs
    assert sum(command.program == "curl" for command in COMMANDS) >= 5


@pytest.mark.parametrize("block", ["echo 'unclosed\n", 'make run \\\n  ARGS="--port\n'])
def test_a_line_the_shell_cannot_split_is_refused(block: str) -> None:
    with pytest.raises(ValueError, match="quotation"):
        commands_in(block)


def test_every_command_is_one_this_test_knows_how_to_check() -> None:
    known = {"make", "docker", "curl", *PYTHONS}
    unknown = [c.line for c in COMMANDS if c.program not in known and not c.program.startswith("scripts/")]

    assert shell_blocks(README.read_text()), "README.md shows no shell block"
    assert not unknown, f"README.md shows commands this test does not check: {unknown}"


def test_every_make_target_and_variable_exists() -> None:
    targets, variables = make_targets(), make_variables()

    for command in by_program("make"):
        words = command.argv[1:]
        named = [word for word in words if "=" not in word]
        assigned = [word.partition("=")[0] for word in words if "=" in word]
        assert named, f"{command.line}: no target (make alone runs the first one, say which)"
        assert set(named) <= targets, f"{command.line}: no such target in the Makefile ({sorted(targets)})"
        assert set(assigned) <= variables, f"{command.line}: the Makefile reads no such variable"


@pytest.mark.parametrize(
    "command",
    [c for c in by_program("make") if any(word.startswith("ARGS=") for word in c.argv)],
    ids=lambda c: c.line,
)
def test_the_arguments_passed_to_make_run_are_accepted_by_the_service(command: Command) -> None:
    args = next(word for word in command.argv if word.startswith("ARGS=")).partition("=")[2]

    # `make run` is `python main.py $(ARGS)`: resolving them must succeed without starting anything.
    done = run([sys.executable, "main.py", *shlex.split(args), "--print-settings"], command.env)

    words = shlex.split(args)
    profile = words[words.index("--profile") + 1] if "--profile" in words else None
    # A removed slice's profile is refused, saying so, unless each choice of it not installed is
    # given instead (--video-client fake).
    if profile is not None and profile in PROFILES and profile not in offered():
        replaced = {SLOTS[slot].flag for slot in instead_of_slices(profile)} <= set(words)
        if not replaced:
            assert done.returncode == 2 and "not installed" in done.stderr, f"{command.line}: {done.stderr}"
            return
    assert done.returncode == 0, f"{command.line}: {done.stderr}"


@pytest.mark.parametrize("command", by_program(*PYTHONS), ids=lambda c: c.line)
def test_every_python_command_names_something_that_runs(command: Command) -> None:
    if "/" in command.program:
        venv = re.search(r"^VENV \?= (\S+)$", makefile(), re.MULTILINE)
        assert venv is not None and command.program == f"{venv.group(1)}/bin/python", command.line
    target, args = list(command.argv[1:3]), list(command.argv[3:])
    if target[0] == "-m":
        assert importlib.util.find_spec(target[1]) is not None, f"{command.line}: no module {target[1]}"
    else:
        target, args = target[:1], list(command.argv[2:])
        assert (ROOT / target[0]).is_file(), f"{command.line}: no file {target[0]}"
    if bool(args) and set(args) <= PRINTING:
        checked = args
    elif target in SERVICE_ENTRIES:
        checked = [*args, "--print-settings"]  # the settings resolve, or exit 2 naming what is wrong
    else:
        checked = ["--help"]

    done = run([sys.executable, *target, *checked], command.env)

    assert done.returncode == 0, f"{command.line}: {done.stderr}"
    assert done.stdout.strip(), f"{command.line}: printed nothing"


@pytest.mark.parametrize(
    "command", [c for c in COMMANDS if c.program.startswith("scripts/")], ids=lambda c: c.line
)
def test_every_script_exists_and_is_executable(command: Command) -> None:
    script = ROOT / command.program

    assert script.is_file(), command.line
    assert os.access(script, os.X_OK), f"{command.line}: not executable"


def docker_builds() -> list[tuple[Command, dict[str, str], str, str]]:
    """Each `docker build` line: (command, build args, tag, context)."""
    builds = []
    for command in by_program("docker"):
        if command.argv[1] != "build":
            continue
        words, args, tag, context = list(command.argv[2:]), {}, "", ""
        while words:
            word = words.pop(0)
            if word == "--build-arg":
                name, _, value = words.pop(0).partition("=")
                args[name] = value
            elif word in ("-t", "--tag"):
                tag = words.pop(0)
            elif word == "--network":
                assert words.pop(0) == "host", f"{command.line}: this engine has host networking only"
            else:
                assert not word.startswith("-"), f"{command.line}: an option this test does not check: {word}"
                context = word
        builds.append((command, args, tag, context))
    return builds


def test_every_docker_build_names_files_and_arguments_that_exist() -> None:
    images_built_here = (ROOT / "scripts/docker-up.sh").read_text()
    builds = docker_builds()

    assert builds, "README.md shows no docker build"
    for command, args, tag, context in builds:
        dockerfile = ROOT / context / "Dockerfile"
        assert dockerfile.is_file(), f"{command.line}: no {dockerfile}"
        declared_args = set(re.findall(r"^ARG (\w+)", dockerfile.read_text(), re.MULTILINE))
        assert set(args) <= declared_args, f"{command.line}: the Dockerfile declares only {declared_args}"
        assert tag, f"{command.line}: no -t: the docker run lines name the image by its tag"
        # Docker Hub is unreachable here: the base must be one scripts/docker-up.sh builds.
        assert args.get("BASE", "").startswith("local/"), f"{command.line}: builds on Docker Hub's base"
        assert args["BASE"] in images_built_here, (
            f"{command.line}: scripts/docker-up.sh builds no {args['BASE']}"
        )
        assert command.env.get("DOCKER_BUILDKIT") == "0", (
            f"{command.line}: --network host needs the legacy builder"
        )


def test_every_docker_run_runs_an_image_the_readme_builds_with_settings_the_service_reads() -> None:
    tags = {tag for _, _, tag, _ in docker_builds()}
    runs = [c for c in by_program("docker") if c.argv[1] == "run"]

    assert runs, "README.md shows no docker run"
    for command in runs:
        words, image = list(command.argv[2:]), ""
        while words and not image:
            word = words.pop(0)
            if word in ("-e", "--env"):
                name = words.pop(0).partition("=")[0]
                assert name in known_variables(), f"{command.line}: the service reads no {name}"
            elif word == "--network":
                assert words.pop(0) == "host", f"{command.line}: this engine has host networking only"
            elif word == "--rm":
                continue
            else:
                assert not word.startswith("-"), f"{command.line}: an option this test does not check: {word}"
                image = word
        assert image in tags, f"{command.line}: no docker build line of the README makes {image!r}"


def test_every_docker_line_is_a_build_or_a_run() -> None:
    subcommands = {command.argv[1] for command in by_program("docker")}

    assert subcommands <= {"build", "run"}, f"docker {subcommands - {'build', 'run'}}: add its check here"


@pytest.mark.parametrize("command", by_program("curl"), ids=lambda c: c.line)
def test_every_curl_line_asks_a_route_of_the_service_with_a_method_it_serves(command: Command) -> None:
    words, method, urls, data = list(command.argv[1:]), "GET", [], None
    while words:
        word = words.pop(0)
        if word in CURL_VALUED:
            value = words.pop(0)
            method = value if word in ("-X", "--request") else method
            data = value if word in ("-d", "--data") else data
        elif not word.startswith("-"):
            urls.append(word)
    assert len(urls) == 1, f"{command.line}: one URL per line"
    url = urlsplit(urls[0] if "://" in urls[0] else f"http://{urls[0]}")

    route, _ = ROUTES.match(url.path)

    assert url.netloc in SERVICE, f"{command.line}: `make run` listens on 127.0.0.1:8080"
    assert route is not None, f"{command.line}: no route {url.path}"
    assert method in route.methods, f"{command.line}: {url.path} does not serve {method}"
    if data is not None:
        orjson.loads(data)
