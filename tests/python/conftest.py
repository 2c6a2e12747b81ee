import os
import subprocess

import pytest


@pytest.fixture(scope="session")
def cli():
    """Runs the built `lockstep` binary (LOCKSTEP_BIN, set by ctest): (exit code, stdout,
    stderr)."""
    binary = os.environ.get("LOCKSTEP_BIN")
    if not binary or not os.path.exists(binary):
        pytest.skip("LOCKSTEP_BIN does not name the built lockstep binary")

    def run(*args):
        p = subprocess.run([binary, *args], capture_output=True, text=True, timeout=120)
        return p.returncode, p.stdout, p.stderr

    return run


@pytest.fixture(scope="session")
def source_dir():
    return os.environ.get("LOCKSTEP_SOURCE_DIR",
                          os.path.dirname(os.path.dirname(os.path.dirname(__file__))))
