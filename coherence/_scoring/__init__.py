"""Forecast scoring at a simulated date: scores, the temporal gateway and
contamination filter, text matching, source precision, key events, causal
pressure and markets.

Private: the public names are re-exported by :mod:`coherence`.
"""
