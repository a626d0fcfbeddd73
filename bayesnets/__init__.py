"""Bayesian-network ground truth for belief-coherence studies (pgmpy-backed).

Networks (:func:`load` the ones bundled with pgmpy, or :func:`fit` CPTs to a
data frame), exact posteriors for many evidence rows at once
(:func:`posterior`, :func:`auxiliary`), evaluation contexts covering the
probability range evenly (:func:`sample_cases`, :func:`contexts`), evidence
phrased in natural language (:func:`describe`, :func:`question`) and the bridge
to simulated agents (:func:`simulated_agent_study`, and :func:`lie_study` for the
law of iterated expectation).

Public names load on first use (PEP 562) and pgmpy is imported only inside the
functions that read or build pgmpy models, so ``import bayesnets`` is cheap.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from coherence._lazy import lazy_attributes as _lazy_attributes

_LAZY: dict[str, str] = {
    "BUNDLED_NETWORKS": "._network",
    "Network": "._network",
    "fit": "._network",
    "load": "._network",
    "auxiliary": "._inference",
    "joint_table": "._inference",
    "posterior": "._inference",
    "PHRASE_NETWORKS": "._phrases",
    "PhraseTable": "._phrases",
    "describe": "._phrases",
    "describe_rows": "._phrases",
    "phrase_table": "._phrases",
    "predicate": "._phrases",
    "question": "._phrases",
    "DEFAULT_STUDIES": "._cases",
    "contexts": "._cases",
    "sample_cases": "._cases",
    "simulated_agent_study": "._cases",
    "DEFAULT_AUXILIARY": "._lie",
    "LIEStudy": "._lie",
    "auxiliary_name": "._lie",
    "lie_study": "._lie",
    "demo_study": "._demo",
    "designed_violations": "._demo",
    "run_demo": "._demo",
}

__all__ = sorted(_LAZY)

if TYPE_CHECKING:  # pragma: no cover - for type checkers and IDEs only
    from ._cases import DEFAULT_STUDIES
    from ._cases import contexts
    from ._cases import sample_cases
    from ._cases import simulated_agent_study
    from ._demo import demo_study
    from ._demo import designed_violations
    from ._demo import run_demo
    from ._inference import auxiliary
    from ._inference import joint_table
    from ._inference import posterior
    from ._lie import DEFAULT_AUXILIARY
    from ._lie import LIEStudy
    from ._lie import auxiliary_name
    from ._lie import lie_study
    from ._network import BUNDLED_NETWORKS
    from ._network import Network
    from ._network import fit
    from ._network import load
    from ._phrases import PHRASE_NETWORKS
    from ._phrases import PhraseTable
    from ._phrases import describe
    from ._phrases import describe_rows
    from ._phrases import phrase_table
    from ._phrases import predicate
    from ._phrases import question

__getattr__, __dir__ = _lazy_attributes(__name__, _LAZY, globals(), __all__)
