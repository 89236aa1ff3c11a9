"""Every program under scripts/ answers --help (its header comment, exit 0) and refuses an unknown option with
one line on stderr and exit 2, as the remat tool does. They run with a PATH that holds only awk and basename
(what the option handling uses), so that a script which ignored the option would fail at its first other
command instead of building, installing or formatting anything."""

import os
import shutil
import subprocess

import pytest

from conftest import ROOT

SOURCED = {"build-env.sh"}  # a library the others source, not a program
SCRIPTS = sorted(p.name for p in (ROOT / "scripts").glob("*.sh") if p.name not in SOURCED)


@pytest.fixture(scope="module")
def bare_path(tmp_path_factory):
    bin_dir = tmp_path_factory.mktemp("bin")
    for tool in ("awk", "basename"):
        os.symlink(shutil.which(tool), bin_dir / tool)
    return str(bin_dir)


def run(script, option, path):
    return subprocess.run([shutil.which("bash"), str(ROOT / "scripts" / script), option], capture_output=True,
                          text=True, timeout=10, env={"PATH": path, "HOME": "/nonexistent"}, cwd="/")


def test_every_program_is_checked():
    assert len(SCRIPTS) >= 10 and "test.sh" in SCRIPTS


@pytest.mark.parametrize("script", SCRIPTS)
def test_script_answers_help_and_refuses_an_unknown_option(script, bare_path):
    done = run(script, "--help", bare_path)
    assert done.returncode == 0, done.stderr
    header = (ROOT / "scripts" / script).read_text().splitlines()[1]
    assert done.stdout.splitlines()[0] == header.lstrip("# ")  # the script's own description
    for option in ("--bogus", "-x"):
        done = run(script, option, bare_path)
        assert done.returncode == 2, done.stderr
        assert done.stdout == "" and done.stderr == f"{script}: unknown option {option} (see --help)\n"
