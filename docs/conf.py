"""Sphinx configuration: Markdown pages (MyST) plus an API reference from docstrings."""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import coherence  # noqa: E402

project = "belief-coherence"
author = "belief-coherence developers"
release = coherence.__version__
extensions = [
    "myst_parser",
    "sphinx.ext.autodoc",
    "sphinx.ext.napoleon",
    "sphinx.ext.mathjax",
    # a MathJax copy shipped with the pages (no CDN): math reads offline
    "sphinx-mathjax-offline",
]
source_suffix = {".md": "markdown", ".rst": "restructuredtext"}
root_doc = "index"
exclude_patterns = ["_build"]
myst_enable_extensions = ["dollarmath", "amsmath"]
myst_heading_anchors = 3
napoleon_numpy_docstring = True
napoleon_google_docstring = False
napoleon_use_rtype = False
autodoc_member_order = "bysource"
autodoc_typehints = "none"
html_theme = "alabaster"
# a wide page and no cap on the text column, so code blocks are not cut off; the
# page width is also alabaster's breakpoint for the narrow (mobile) layout
html_theme_options = {"page_width": "1280px", "body_max_width": "none",
                      "body_min_width": "0"}
html_static_path = ["_static"]
html_css_files = ["wide.css"]
suppress_warnings = ["myst.header", "ref.citation"]


def _unique_citations(app, what, name, obj, options, lines):  # noqa: ARG001
    """Make numbered references ([1]_) unique per object: many share one page."""
    import re

    prefix = re.sub(r"\W", "", name.split(".")[-1]) or "ref"
    for i, line in enumerate(lines):
        line = re.sub(r"\[(\d+)\]_", lambda m: f"[{prefix}{m.group(1)}]_", line)
        lines[i] = re.sub(r"^(\s*)\.\. \[(\d+)\]", lambda m: f"{m.group(1)}.. [{prefix}"
                          f"{m.group(2)}]", line)


def setup(app):
    app.connect("autodoc-process-docstring", _unique_citations)
