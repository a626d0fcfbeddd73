"""The report: the registry of tests, running the cells, rendering HTML.

Private: the public names are re-exported by :mod:`coherence`.
"""
