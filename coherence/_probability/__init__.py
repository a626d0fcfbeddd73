"""Probability axioms and conditional forecasting: row-wise axiom checks, the
law of iterated expectation, question pairs (reading, test, power).

Private: the public names are re-exported by :mod:`coherence`.
"""
