"""Decision coherence: kNN CMI, the conditional-independence test, leakage,
monotone choice, prompt consistency and the simulated agents.

Private: the public names are re-exported by :mod:`coherence`.
"""
