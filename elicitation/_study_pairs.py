"""The conditional-forecasting study's question pairs, drawn from a bundled network.

Each question is an event of the network ("the next patient referred has tetralogy
of Fallot"); a pair (A, B) has exact P(A), P(A | B), P(A | not B) and the reverse
direction from the network's joint distribution, a category from the exact
dependence (``strong``, ``weak``, ``none``), and outcomes drawn from the joint, so a
study of the conditional-forecasting design runs offline on a question set with a
known answer: a coherent forecaster's P(A | B) improves on its P(A) exactly where the
category says it should.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

from ._templates import Template

__all__ = ["PAIR_CATEGORIES", "PAIR_LABEL_TEMPLATE", "failed_pair_rows", "label_pairs",
           "network_pairs", "select_pairs"]

#: |P(A | B) - P(A | not B)| at or above which a pair is ``strong``, ``weak``;
#: below the second it is ``none``.
PAIR_CATEGORIES = (("strong", 0.25), ("weak", 0.05), ("none", 0.0))


#: the phrases' leading verbs (bayesnets' predicate words among them: "smokes", "recently
#: visited"), which take the subject directly
_VERBS = {"has", "have", "had", "is", "was", "were", "did", "does", "suffered", "suffers",
          "shows", "smokes", "recently", "visited", "takes", "reports"}


def _question(subject: str, phrase: str) -> str:
    """A yes/no forecasting question from an event's phrase (with or without a verb)."""
    if phrase.split(" ", 1)[0].lower() in _VERBS:
        return f"Will it turn out that {subject} {phrase}?"
    return f"Will it turn out, for {subject}, that {phrase}?"


def _category(gap: float) -> str:
    return next(name for name, low in PAIR_CATEGORIES if gap >= low)


def network_pairs(network: str = "child", *, n_pairs: int = 12, subject: str =
                  "the next patient referred", rng: Any = 0) -> pd.DataFrame:
    """Question pairs of a bundled network, balanced over the three categories.

    Returns a frame with ``pair``, ``question_a``, ``question_b``, ``category``,
    the exact ``p_a``, ``p_a_given_b1``, ``p_a_given_b0``, ``p_b``,
    ``p_b_given_a1``, ``p_b_given_a0`` and ``a_outcome``, ``b_outcome`` (one
    draw of the pair from the network's joint distribution).
    """
    import bayesnets

    gen = np.random.default_rng(rng)
    net = bayesnets.load(network)
    phrases = bayesnets.phrase_table(network)
    events = [(v, s, phrases[v][s]) for v in net.variables if v in phrases
              for s in net.states[v] if isinstance(phrases[v].get(s), str)]
    by_category: dict[str, list[dict[str, Any]]] = {name: [] for name, _ in PAIR_CATEGORIES}
    for i, (va, sa, pa_text) in enumerate(events):
        for vb, sb, pb_text in events[i + 1:]:
            if va == vb:
                continue
            joint = np.asarray(bayesnets.joint_table(net, [va, vb]), dtype=float)
            ia, ib = net.states[va].index(sa), net.states[vb].index(sb)
            p11 = joint[ia, ib]
            p_a, p_b = joint[ia, :].sum(), joint[:, ib].sum()
            if not (0.02 < p_a < 0.98 and 0.02 < p_b < 0.98):
                continue
            p_a_b1, p_a_b0 = p11 / p_b, (p_a - p11) / (1 - p_b)
            p_b_a1, p_b_a0 = p11 / p_a, (p_b - p11) / (1 - p_a)
            by_category[_category(abs(p_a_b1 - p_a_b0))].append({
                "question_a": _question(subject, pa_text),
                "question_b": _question(subject, pb_text),
                "p_a": p_a, "p_a_given_b1": p_a_b1, "p_a_given_b0": p_a_b0,
                "p_b": p_b, "p_b_given_a1": p_b_a1, "p_b_given_a0": p_b_a0,
                "joint": (p11, p_a - p11, p_b - p11, 1 - p_a - p_b + p11)})
    rows = []
    per = [n_pairs // 3 + (k < n_pairs % 3) for k in range(3)]
    for (name, _), k in zip(PAIR_CATEGORIES, per, strict=True):
        pool = by_category[name]
        for j in gen.permutation(len(pool))[:k]:
            rows.append({**pool[j], "category": name})
    frame = pd.DataFrame(rows)
    cells = np.array([gen.choice(4, p=np.clip(r, 0, None) / np.clip(r, 0, None).sum())
                      for r in frame.pop("joint")])
    frame["a_outcome"] = (cells < 2).astype(int)          # cells: (a, b) = 11, 10, 01, 00
    frame["b_outcome"] = np.isin(cells, (0, 2)).astype(int)
    frame.insert(0, "pair", [f"{network}-{k}" for k in range(len(frame))])
    return frame


# --------------------------------------------------------------------------- a model designs
#: The toolkit's wording (the conditional-forecasting study did not publish its own).
PAIR_LABEL_TEMPLATE = Template(
    "design_pair_label", "probability",
    system="You write and compare forecasting questions precisely.", labels=("Relation", "Note"),
    user="Consider two forecasting questions.\n\nQuestion A: {question_a}\nQuestion B: "
    "{question_b}\n\nHow strongly would learning how question B resolves change the "
    "probability that question A resolves YES? Answer STRONG (a lot: a direct causal or "
    "logical link), WEAK (a little) or NONE (the questions are unrelated or independent).\n\n"
    "Reply with exactly one line:\nRelation: <STRONG, WEAK or NONE>",
    description="study design: label a question pair strong / weak / none (toolkit wording)")


def label_pairs(candidates: pd.DataFrame, client: Any, opts: Any) -> pd.DataFrame:
    """Ask the model to label each candidate pair strong / weak / none; keep the replies.

    Returns one row per candidate: ``pair``, ``exact_category`` (from the network),
    ``reply`` (the raw text), ``label`` (lower case; ``''`` when the reply's ``Relation``
    line starts with none of the three, or names two: "STRONG or WEAK"). ``attrs`` holds
    ``n_calls`` and ``n_cached``.
    """
    from ._engine import execute
    from ._engine import make_job
    from ._engine import settings_json
    from ._study_tuples import reply_choice

    settings = settings_json(client)
    jobs = [make_job(client, settings, PAIR_LABEL_TEMPLATE,
                     {"question_a": r["question_a"], "question_b": r["question_b"]},
                     context=r["pair"], prompt="design_pair_label", repetition=0,
                     quantity="pair_label") for r in candidates.to_dict("records")]
    done = execute(client, jobs, opts)
    names = [name for name, _ in PAIR_CATEGORIES]
    labels = [reply_choice(text, "Relation", names) for text in done.raw["text"]]
    out = pd.DataFrame({"pair": candidates["pair"].to_numpy(),
                        "exact_category": candidates["category"].to_numpy(),
                        "reply": done.raw["text"].to_numpy(), "label": labels})
    out.attrs["n_calls"] = done.engine.calls
    out.attrs["n_cached"] = len(done.before)
    return out


def select_pairs(candidates: pd.DataFrame, labelled: pd.DataFrame, n_pairs: int
                 ) -> pd.DataFrame:
    """The pairs the model found: up to ``n_pairs``, balanced over its labels (a label
    with too few pairs leaves its places to the others), ``category`` the model's label
    and ``exact_category`` the network's."""
    frame = candidates.rename(columns={"category": "exact_category"}).merge(
        labelled[["pair", "label"]], on="pair")
    frame = frame[frame["label"] != ""].rename(columns={"label": "category"})
    groups = {name: frame[frame["category"] == name] for name, _ in PAIR_CATEGORIES}
    quota = dict.fromkeys(groups, 0)
    left = n_pairs
    while left and any(quota[n] < len(g) for n, g in groups.items()):
        for name, g in groups.items():
            if left and quota[name] < len(g):
                quota[name] += 1
                left -= 1
    chosen = pd.concat([g.head(quota[name]) for name, g in groups.items()], ignore_index=True)
    return chosen


def failed_pair_rows(data: pd.DataFrame, raw: pd.DataFrame, pairs: pd.DataFrame,
                     variants: list[str], repetitions: int, models: list[str]) -> pd.DataFrame:
    """The design's (model, pair, variant, repetition) rows missing from ``data``, each
    with its pair's category and outcomes and, in ``error``, the quantities that failed and
    why: for :func:`coherence.conditional_forecasting` to count them in its ``n_failed``
    column (left out, a cell read 0 failed records and a category whose every pair failed
    vanished from the results)."""
    from ._pairs import pair_templates

    forecast = {v: t.name for v, t in pair_templates(variants)[1].items()}
    done = set(zip(data["model"].astype(str), data["pair"].astype(str),
                   data["variant"].astype(str), data["repetition"].astype(int), strict=True))
    reasons: dict[tuple[str, str, int, str], list[str]] = {}
    bad = raw[~raw["parse_ok"].astype(bool)]
    for r in bad.itertuples(index=False):
        text = f"{r.quantity}/{r.reason or 'no reply'}"
        reasons.setdefault((str(r.model), str(r.context), int(r.repetition), str(r.prompt)),
                           []).append(text)
    kept = [c for c in ("category", "a_outcome", "b_outcome") if c in pairs.columns]
    rows = []
    for model in models:
        for row in pairs.to_dict("records"):
            pair = str(row["pair"])
            for v in variants:
                for rep in range(repetitions):
                    if (model, pair, v, rep) in done:
                        continue
                    why = (reasons.get((model, pair, rep, v), [])
                           + reasons.get((model, pair, rep, forecast[v]), []))
                    rows.append({"pair": row["pair"], "variant": v, "repetition": rep,
                                 **{c: row[c] for c in kept}, "model": model,
                                 "error": "; ".join(why) or "an elicitation failed"})
    return pd.DataFrame(rows, columns=["pair", "variant", "repetition", *kept, "model",
                                       "error"])
