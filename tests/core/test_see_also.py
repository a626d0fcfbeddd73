"""Every public function says what it is for and where to go next: a numpydoc extended
summary and a "See Also" section.

The extended summary (numpydoc's ES01) follows the one-line summary: what the function
is for, the method in a sentence, when to use it, so that ``help()`` answers before the
parameters.

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


def extended_summary(obj: object) -> str | None:
    """The paragraph after the one-line summary, or None when a section comes first."""
    paragraphs = (inspect.getdoc(obj) or "").split("\n\n")
    if len(paragraphs) < 2:
        return None
    lines = paragraphs[1].splitlines()
    is_section = len(lines) >= 2 and set(lines[1]) == {"-"}
    return None if is_section else paragraphs[1]


@pytest.mark.parametrize(("name", "obj"), FUNCTIONS, ids=[name for name, _ in FUNCTIONS])
def test_extended_summary(name: str, obj: object) -> None:
    text = extended_summary(obj)
    assert text, f"{name}: no extended summary between the one-line summary and the sections"
    assert len(text.split()) >= 12, f"{name}: the extended summary says too little: {text!r}"


def test_extended_summary_parser() -> None:
    def with_one() -> None:
        """Do it.

        Because it is needed, in the way the paper does it.

        Parameters
        ----------
        """

    def without() -> None:
        """Do it.

        Parameters
        ----------
        """

    assert extended_summary(with_one) == "Because it is needed, in the way the paper does it."
    assert extended_summary(without) is None
    assert extended_summary(lambda: None) is None


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


# --------------------------------------------------------------------------- Returns sections
RETURNS_HEADERS = ("Returns", "Yields")


def public_methods() -> list[tuple[str, object]]:
    """The public methods (and property getters) of the packages' public classes,
    inherited ones included when one of the packages defines them."""
    out: list[tuple[str, object]] = []
    seen: set[int] = set()
    for package in PACKAGES:
        module = importlib.import_module(package)
        for name in module.__all__:
            cls = getattr(module, name)
            if not inspect.isclass(cls):
                continue
            for owner in cls.__mro__:
                if owner.__module__.partition(".")[0] not in PACKAGES:
                    continue
                for attr, value in vars(owner).items():
                    func = value.fget if isinstance(value, property) else value
                    func = getattr(func, "__func__", func)
                    if attr.startswith("_") or not inspect.isfunction(func) or id(func) in seen:
                        continue
                    seen.add(id(func))
                    out.append((f"{package}.{name}.{attr}", func))
    return out


RETURNING = FUNCTIONS + public_methods()


def undescribed_returns(obj: object) -> list[str]:
    """The entries of the Returns and Yields sections that have no description.

    An entry is a line at the section's indentation (``type`` or ``name : type``); its
    description is the indented text directly under it. A section ends at the next
    section header (a line underlined with dashes) or at the end of the docstring.
    """
    lines = (inspect.getdoc(obj) or "").splitlines()

    def is_header(i: int) -> bool:
        return (i + 1 < len(lines) and bool(lines[i].strip()) and not lines[i][0].isspace()
                and lines[i + 1] == "-" * len(lines[i]))

    bare = []
    for i in range(len(lines)):
        if lines[i] not in RETURNS_HEADERS or not is_header(i):
            continue
        j = i + 2
        while j < len(lines) and not is_header(j):
            line = lines[j]
            if line.strip() and not line[0].isspace():
                following = lines[j + 1] if j + 1 < len(lines) else ""
                if not (following.strip() and following[0].isspace()):
                    bare.append(line)
            j += 1
    return bare


def test_the_returns_walk_finds_the_methods() -> None:
    names = {name for name, _ in RETURNING}
    assert len(names) > len(FUNCTIONS) + 50
    assert {"coherence.ForecastScoresResult.compare", "coherence.TemporalGateway.validate",
            "coherence.PairsPowerResult.to_frame"} <= names


@pytest.mark.parametrize(("name", "obj"), RETURNING, ids=[name for name, _ in RETURNING])
def test_returns_entries_are_described(name: str, obj: object) -> None:
    bare = undescribed_returns(obj)
    assert not bare, (f"{name}: the Returns/Yields entries {bare} name a type with no "
                      "description; say under each what it holds")


def test_returns_parser() -> None:
    def f() -> None:
        """Do it.

        Returns
        -------
        PairsPowerResult
            The required n.
        table : pandas.DataFrame

            Text after a blank line is not a description: it must come right under.
        extra : int

        Notes
        -----
        Text.
        """

    def g() -> None:
        """Do it.

        Yields
        ------
        str
        """

    def h() -> None:
        """Do it.

        Returns
        -------
        a, b : float
            Both.
        """

    assert undescribed_returns(f) == ["table : pandas.DataFrame", "extra : int"]
    assert undescribed_returns(g) == ["str"]
    assert undescribed_returns(h) == [] and undescribed_returns(public_methods) == []
