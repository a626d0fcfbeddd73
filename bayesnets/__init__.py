"""Bayesian-network ground truth for belief-coherence studies (pgmpy-backed).

Networks, exact posteriors, case sampling and evidence phrasing arrive with the
bayesnets issue; pgmpy is imported inside the functions that need it.
"""

from __future__ import annotations

__all__: list[str] = []
