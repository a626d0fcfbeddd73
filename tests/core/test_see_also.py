"""Every public function says where to go next: a numpydoc "See Also" section.

As in scipy.stats, the test families link to each other (the decision-coherence tests,
the probability-axiom checks, the forecast scores, the report and the tests it runs),
so a reader who lands on one finds the others. Each entry is one line, ``name : what it
is`` (or ``name, name : what they are``), and names public objects: a bare name of
the same package, or ``package.name`` of another.
"""

from __future__ import annotations

import importlib
import inspect
import re

import pytest

PACKAGES = ("coherence", "bayesnets", "elicitation")

#: Public functions allowed without a See Also section (none).
WITHOUT_SEE_ALSO: frozenset[str] = frozenset()

SECTION = re.compile(r"^See Also\n-{8}\n(?P<body>.*?)(?:\n\n|\Z)", re.MULTILINE | re.DOTALL)
ENTRY = re.compile(r"^(?P<names>[A-Za-z_][\w.]*(?:, [A-Za-z_][\w.]*)*) : \S.*\S$")


def public_functions() -> list[tuple[str, object]]:
    out = []
    for package in PACKAGES:
        module = importlib.import_module(package)
        out += [(f"{package}.{name}", getattr(module, name)) for name in module.__all__
                if inspect.isfunction(getattr(module, name))]
    return out


FUNCTIONS = public_functions()


def see_also(obj: object) -> list[str] | None:
    """The entry lines of the See Also section, or None without one."""
    match = SECTION.search(inspect.getdoc(obj) or "")
    return None if match is None else match["body"].splitlines()


def resolves(target: str, package: str) -> bool:
    head, _, tail = target.partition(".")
    owner, name = (head, tail) if tail else (package, head)
    if owner not in PACKAGES:
        return False
    return name in importlib.import_module(owner).__all__


def test_the_walk_finds_the_functions() -> None:
    names = {name for name, _ in FUNCTIONS}
    assert len(names) >= 80
    assert {"coherence.prompt_consistency", "bayesnets.posterior", "elicitation.run"} <= names
    assert names >= WITHOUT_SEE_ALSO


@pytest.mark.parametrize(("name", "obj"), FUNCTIONS, ids=[name for name, _ in FUNCTIONS])
def test_see_also_section(name: str, obj: object) -> None:
    entries = see_also(obj)
    if name in WITHOUT_SEE_ALSO:
        assert entries is None, f"{name} has a See Also section now: remove it from the list"
        return
    assert entries, f"{name} has no See Also section"
    package = name.partition(".")[0]
    for line in entries:
        match = ENTRY.match(line)
        assert match, f"{name}: See Also entries are one line 'name : description'; got {line!r}"
        for target in match["names"].split(", "):
            assert target != name.partition(".")[2], f"{name} refers to itself"
            assert resolves(target, package), f"{name}: See Also names {target!r}, not public"


def test_section_parser() -> None:
    def f() -> None:
        """Do it.

        See Also
        --------
        g : the other one.
        coherence.report : all of them.

        Notes
        -----
        Text.
        """

    assert see_also(f) == ["g : the other one.", "coherence.report : all of them."]
    assert see_also(public_functions) is None
    assert resolves("coherence.report", "bayesnets") and resolves("posterior", "bayesnets")
    assert not resolves("posterior", "coherence") and not resolves("numpy.mean", "coherence")
