"""The command-line tests' shared fixture: a command run in this process."""

import subprocess

import pytest

from coherence_cli import main


@pytest.fixture
def run(capsys):
    """``run(*args)``: ``coherence *args`` through :func:`coherence_cli.main` in this process,
    as a :class:`subprocess.CompletedProcess` (return code, captured stdout and stderr)."""
    def call(*args):
        code = main(list(args))
        out = capsys.readouterr()
        return subprocess.CompletedProcess(args, code, out.out, out.err)
    return call
