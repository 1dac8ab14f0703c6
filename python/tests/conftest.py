"""Shared fixtures: the `cdpr` command line the Python results are checked against.

`CDPR_BIN` names the binary (the Rust harness tests/python_package.rs sets it to the one cargo
just built); without it the tests that compare with the CLI are skipped.
"""

import json
import os
import subprocess
from pathlib import Path

import pytest


@pytest.fixture(scope="session")
def cdpr_bin() -> str:
    path = os.environ.get("CDPR_BIN")
    if not path or not Path(path).exists():
        pytest.skip("CDPR_BIN (the cdpr binary to compare with) is not set")
    return path


@pytest.fixture(scope="session")
def cli(cdpr_bin):
    """cli(*args) -> CompletedProcess of `cdpr args…` (text)."""

    def run(*args, check=True):
        done = subprocess.run([cdpr_bin, "--quiet", *map(str, args)], capture_output=True, text=True)
        if check and done.returncode not in (0, 2):
            raise AssertionError(f"cdpr {' '.join(map(str, args))} failed:\n{done.stderr}")
        return done

    return run


@pytest.fixture(scope="session")
def cli_json(cli):
    """cli_json(*args) -> the object `cdpr args… --json` prints."""

    def run(*args):
        return json.loads(cli(*args, "--json").stdout)

    return run
