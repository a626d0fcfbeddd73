"""Hypothesis properties of the decision tests' values: ``monotonicity_test`` (both global
methods), ``cyclic_monotonicity_test``, ``iia_test``, ``prompt_consistency`` (each method
and alternative) and ``leakage_test`` (logistic engine).

Each property is one a wrong implementation would break: the same ``rng`` gives the same
p-value and interval whatever the order of the rows, the names of the columns, an added
irrelevant column and an order-preserving relabelling of contexts and actions; the
paper's binned procedure, the Mantel-Haenszel odds ratios and score statistics and the
prompt shifts against loops written here from the docstrings; the Monte Carlo p-values'
bounds; and the symmetries the definitions have (mirrored beliefs with the actions or
the order reversed, an action-order-reversing relabelling).
"""

from __future__ import annotations

import math
import warnings
from itertools import combinations

import numpy as np
import pandas as pd
import pytest
from hypothesis import given
from hypothesis import settings
from hypothesis import strategies as st
from scipy.stats import fisher_exact

import coherence
from coherence import DegenerateDataWarning
from coherence import NotCalibratedWarning
from coherence import SmallSampleWarning
from coherence import TiesWarning

GRID = [i / 20 for i in range(1, 20)]  # heaped beliefs: multiples of 0.05



def shuffled(df: pd.DataFrame, shuffle) -> pd.DataFrame:
    """The rows in the order a hypothesis ``Random`` draws, with a fresh index."""
    order = list(range(len(df)))
    shuffle.shuffle(order)
    return df.iloc[order].reset_index(drop=True)


def quiet(func, *args, **kw):
    """Small tables: too few contexts, merged bins, pairs left out are all warned about."""
    with warnings.catch_warnings():
        for w in (SmallSampleWarning, DegenerateDataWarning, TiesWarning, NotCalibratedWarning):
            warnings.simplefilter("ignore", w)
        return func(*args, **kw)


def same(a: float, b: float, rel: float = 1e-9) -> bool:
    if math.isnan(a) or math.isnan(b):
        return math.isnan(a) and math.isnan(b)
    return a == pytest.approx(b, rel=rel, abs=1e-12)


def key(res) -> tuple[float, ...]:
    ci = res.confidence_interval
    return (res.statistic, res.pvalue, ci.low, ci.high)


def same_key(a, b, rel: float = 1e-9) -> None:
    for x, y in zip(key(a), key(b), strict=True):
        assert same(x, y, rel), (key(a), key(b))


def same_numbers(a: pd.DataFrame, b: pd.DataFrame, rel: float = 1e-9) -> None:
    x = a.select_dtypes("number").to_numpy(dtype=float)
    y = b.select_dtypes("number").to_numpy(dtype=float)
    np.testing.assert_allclose(x, y, rtol=rel, atol=1e-12)


# --------------------------------------------------------------------------- decision tables
@st.composite
def decision_tables(draw: st.DrawFn, low: int = 16, high: int = 36,
                    heaped: bool | None = None) -> pd.DataFrame:
    """Contexts with unequal repetitions (1-3), heaped or continuous beliefs (constant in
    a context or not), a context-level shock on the action, an outcome per context."""
    n_contexts = draw(st.integers(low, high))
    heaped = draw(st.booleans()) if heaped is None else heaped
    seed = draw(st.integers(0, 2**31 - 1))
    rng = np.random.default_rng(seed)
    rows = []
    for c in range(n_contexts):
        base = float(rng.choice(GRID)) if heaped else float(rng.uniform(0.02, 0.98))
        shock = rng.normal(0, 1)
        y = int(rng.random() < base)
        for r in range(int(rng.integers(1, 4))):
            b = base
            if rng.random() < 0.3:
                b = (float(rng.choice(GRID)) if heaped
                     else float(np.clip(base + rng.normal(0, 0.05), 0.01, 0.99)))
            logit = 3 * (b - 0.5) + shock
            action = ("yes" if rng.random() < 1 / (1 + math.exp(-logit)) else
                      "no" if rng.random() < 0.7 else "defer")
            rows.append({"context": c, "repetition": r, "belief": b, "action": action,
                         "outcome": y})
    return pd.DataFrame(rows)


ACTION_NAMES = {"defer": "b_wait", "no": "c_sell", "yes": "d_buy"}  # the same sorted order


def disguise(df: pd.DataFrame, shuffle) -> pd.DataFrame:
    """Rows shuffled, columns renamed, actions and contexts relabelled in the same
    sorted order, and an irrelevant column added."""
    order = list(range(len(df)))
    shuffle.shuffle(order)
    out = df.iloc[order].reset_index(drop=True)
    return pd.DataFrame({
        "p": out["belief"], "choice": out["action"].map(ACTION_NAMES),
        "ctx": out["context"].map(lambda c: f"question-{c:03d}"), "y": out["outcome"],
        "junk": np.arange(len(out))[::-1] * 0.5})


def monotone(df: pd.DataFrame, **kw) -> coherence.MonotonicityResult:
    # each method's own options (an option the method does not use raises)
    own = ({"min_contexts": 4} if kw.get("method", "local") == "local"
           else {"n_windows": 2} if kw["method"] == "permutation" else {})
    kw = {"n_resamples": 49, "rng": 0, **own, **kw}
    return quiet(coherence.monotonicity_test, df, **kw)


@given(decision_tables(), st.sampled_from(["local", "permutation", "bootstrap"]),
       st.randoms(use_true_random=False), st.integers(0, 2**16))
@settings(max_examples=12)
def test_monotonicity_row_order_names_and_labels_do_not_matter(df, method, shuffle, seed):
    a = monotone(df, method=method, rng=seed)
    pairs = [(ACTION_NAMES[x], ACTION_NAMES[y]) for x, y in a.pairs]
    b = monotone(disguise(df, shuffle), method=method, rng=seed, belief="p", action="choice",
                 group="ctx", pairs=pairs)
    same_key(a, b)
    same_numbers(a.table, b.table)
    same_numbers(a.bin_table, b.bin_table)
    same_numbers(a.comparison_table, b.comparison_table)
    same_numbers(a.local_table, b.local_table)
    assert a.n_draws == b.n_draws and a.n_obs == b.n_obs


def reference_bins(belief: np.ndarray, first: np.ndarray, n_bins: int):
    """The documented bins: cut at the inverted-cdf quantiles at j / K, bin j is
    (c_j, c_{j+1}], empty bins dropped; per bin (rows, rows choosing the first action)."""
    cuts = sorted({float(np.quantile(belief, j / n_bins, method="inverted_cdf"))
                   for j in range(1, n_bins)})
    raw = [sum(1 for c in cuts if c < v) for v in belief]  # cuts strictly below v
    used = sorted(set(raw))
    m = [sum(1 for r in raw if r == u) for u in used]
    x = [sum(int(f) for r, f in zip(raw, first, strict=True) if r == u) for u in used]
    return m, x


@given(decision_tables(low=6, high=20), st.sampled_from([2, 3, 5]),
       st.sampled_from(["increasing", "decreasing"]))
@settings(max_examples=15)
def test_monotonicity_paper_procedure_equals_a_loop_over_bins(df, n_bins, direction):
    res = monotone(df, n_bins=n_bins, direction=direction, method="bootstrap", n_resamples=9)
    n_sig_all = n_comp_all = 0
    for a1, a2 in res.pairs:
        part = df[df["action"].isin([a1, a2])]
        b = part["belief"].to_numpy()
        first = (part["action"] == a1).to_numpy()
        bins = res.bin_table[res.bin_table["pair"] == f"{a1}/{a2}"]
        comps = res.comparison_table[res.comparison_table["pair"] == f"{a1}/{a2}"]
        if len(part) == 0:
            assert len(bins) == 0 and len(comps) == 0
            continue
        if direction == "decreasing":  # bins of 1 - b, listed from the lowest belief up
            m, x = reference_bins(1.0 - b, first, n_bins)
            m, x = m[::-1], x[::-1]
        else:
            m, x = reference_bins(b, first, n_bins)
        assert list(bins["n_action_1"]) == x
        assert list(bins["n_action_1"] + bins["n_action_2"]) == m
        assert (np.diff(bins["centre"].to_numpy()) > 0).all()
        share = [xi / mi for xi, mi in zip(x, m, strict=True)]
        k = len(m)
        n_sig = 0
        expected = []
        # a pair one of whose actions is never chosen compares nothing (shares all 0 or 1)
        compared = k if 0 < first.sum() < len(first) else 0
        for j, i in combinations(range(compared), 2):  # j below i in belief
            if direction == "increasing":
                flagged = share[j] > share[i]
                p = fisher_exact([[x[j], m[j] - x[j]], [x[i], m[i] - x[i]]],
                                 alternative="greater").pvalue if flagged else math.nan
            else:  # the share of a1 should fall as the belief rises
                flagged = share[j] < share[i]
                p = fisher_exact([[x[i], m[i] - x[i]], [x[j], m[j] - x[j]]],
                                 alternative="greater").pvalue if flagged else math.nan
            expected.append((j, i, flagged, p))
            n_sig += bool(flagged and p < 0.05)
        got = sorted(zip(comps["bin_low"], comps["bin_high"], comps["flagged"],
                         comps["pvalue"], strict=True))
        assert len(got) == len(expected) == compared * (compared - 1) // 2
        for (j, i, f, p), (gj, gi, gf, gp) in zip(sorted(expected), got, strict=True):
            assert (j, i, f) == (gj, gi, gf)
            assert same(p, gp, rel=1e-9)
        row = res.table[res.table["pair"] == f"{a1}/{a2}"].iloc[0]
        assert row["n_significant"] == n_sig and row["n_comparisons"] == len(expected)
        assert row["n_obs"] == len(part)
        n_sig_all += n_sig
        n_comp_all += len(expected)
    assert same(res.statistic, 100 * n_sig_all / n_comp_all if n_comp_all else math.nan)


@given(decision_tables(), st.sampled_from(["local", "permutation"]), st.integers(5, 60))
@settings(max_examples=12)
def test_monotonicity_pvalues_are_bounded_monte_carlo_pvalues(df, method, n_resamples):
    res = monotone(df, method=method, n_resamples=n_resamples)
    pv = res.table["pvalue"].to_numpy(dtype=float)
    testable = res.table["testable"].to_numpy(dtype=bool)
    assert np.isnan(pv[~testable]).all()
    for p in pv[testable]:
        assert math.isnan(p) or 1 / (n_resamples + 1) - 1e-12 <= p <= 1.0
    if math.isnan(res.pvalue):
        assert not testable.any() or method == "local"
        return
    if method == "permutation":  # Bonferroni over the testable pairs
        kept = pv[~np.isnan(pv)]
        assert res.pvalue == min(1.0, float(kept.min()) * len(kept))
    else:  # one max-T calibration on the same draws as each pair's own p-value
        assert 1 / (res.n_draws + 1) - 1e-12 <= res.pvalue <= 1.0
        assert res.n_draws <= n_resamples
        kept = pv[~np.isnan(pv)]
        if res.n_draws == n_resamples:  # not stopped early: between min p and Bonferroni
            assert kept.min() - 1e-12 <= res.pvalue <= kept.sum() + 1e-12
        finite = res.local_table["pvalue_adjusted"].to_numpy(dtype=float)
        assert ((finite >= res.pvalue - 1e-12) & (finite <= 1.0)).all()


@given(decision_tables())
@settings(max_examples=10)
def test_monotonicity_isotonic_statistic_is_mirror_symmetric(df):
    """On every distinct value, the isotonic likelihood ratio of a1's share rising in b is
    that of a2's share rising in 1 - b (the non-decreasing fit of one is one minus the
    fit of the other, read backwards): the same global statistic per pair."""
    kw = {"method": "permutation", "lr_on": "values", "n_windows": 1}
    a = monotone(df, **kw)
    swapped = [(y, x) for x, y in a.pairs]
    b = monotone(df.assign(belief=1.0 - df["belief"]), pairs=swapped, **kw)
    np.testing.assert_allclose(a.table["global_statistic"], b.table["global_statistic"],
                               rtol=1e-9, atol=1e-9)
    assert list(a.table["testable"]) == list(b.table["testable"])


def cyclic(df: pd.DataFrame, **kw) -> coherence.CyclicMonotonicityResult:
    kw = {"n_resamples": 99, "rng": 0, "min_contexts": 4, **kw}
    return quiet(coherence.cyclic_monotonicity_test, df, **kw)


@given(decision_tables(), st.randoms(use_true_random=False), st.integers(0, 2**16))
@settings(max_examples=12)
def test_cyclic_row_order_names_and_labels_do_not_matter(df, shuffle, seed):
    a = cyclic(df, rng=seed)
    b = cyclic(disguise(df, shuffle), rng=seed, belief="p", action="choice", group="ctx",
               order=[ACTION_NAMES[x] for x in ("no", "defer", "yes")])
    same_key(a, b)
    same_numbers(a.table, b.table)
    same_numbers(a.comparison_table, b.comparison_table)
    if not math.isnan(a.pvalue):
        assert 1 / (a.n_resamples + 1) - 1e-12 <= a.pvalue <= 1.0


# --------------------------------------------------------------------------- iia
MENUS = ("defer|no|yes", "no|yes", "defer|yes", "defer|no")


@st.composite
def menu_tables(draw: st.DrawFn) -> pd.DataFrame:
    """Contexts with their own taste for each action, choices under the full menu and
    some reduced menus (1-4 rows each), sometimes a menu that breaks IIA, heaped beliefs."""
    n_contexts = draw(st.integers(6, 24))
    n_menus = draw(st.integers(2, 4))
    seed = draw(st.integers(0, 2**31 - 1))
    rng = np.random.default_rng(seed)
    acts = ["defer", "no", "yes"]
    rows = []
    for c in range(n_contexts):
        taste = rng.dirichlet([2, 2, 2])
        for m in MENUS[:n_menus]:
            offered = m.split("|")
            p = np.array([taste[acts.index(a)] for a in offered])
            if m == "no|yes" and rng.random() < 0.3:
                p = np.array([0.2, 0.8])
            p = p / p.sum()
            for _ in range(int(rng.integers(1, 5))):
                rows.append({"context": c, "menu": m,
                             "action": offered[int(rng.choice(len(offered), p=p))],
                             "belief": float(rng.choice([0.1, 0.5, 0.5, 0.9]))})
    return pd.DataFrame(rows)


def iia(df: pd.DataFrame, **kw) -> coherence.IIAResult:
    kw = {"n_resamples": 99, "rng": 0, **kw}
    return quiet(coherence.iia_test, df, **kw)


def relabel_menu(menu: str, names: dict[str, str]) -> str:
    return "|".join(names[a] for a in menu.split("|"))


@given(menu_tables(), st.randoms(use_true_random=False), st.integers(0, 2**16))
@settings(max_examples=15)
def test_iia_row_order_names_and_labels_do_not_matter(df, shuffle, seed):
    a = iia(df, rng=seed)
    d = shuffled(df, shuffle)
    renamed = pd.DataFrame({
        "p": d["belief"], "choice": d["action"].map(ACTION_NAMES),
        "offer": d["menu"].map(lambda m: relabel_menu(m, ACTION_NAMES)),
        "ctx": d["context"].map(lambda c: f"c{c:03d}"), "junk": 1.0})
    b = iia(renamed, rng=seed, belief="p", action="choice", menu="offer", group="ctx")
    same_key(a, b)
    same_numbers(a.table, b.table)
    same_numbers(a.menu_table, b.menu_table)


def reference_comparison(df: pd.DataFrame, a: str, b: str, menu: str) -> tuple[float, float]:
    """The docstring's Z = sum U_c / sqrt(sum U_c^2) and Mantel-Haenszel odds ratio of
    choosing a over b under ``menu`` relative to the full menu, context by context."""
    # the full menu offers every action on any menu (an action nobody chose included)
    full = "|".join(sorted({a for m in df["menu"] for a in m.split("|")}))
    u, num, den = [], 0.0, 0.0
    for _, part in df.groupby("context"):
        red = part[(part["menu"] == menu) & part["action"].isin([a, b])]
        ful = part[(part["menu"] == full) & part["action"].isin([a, b])]
        n1, n0 = len(red), len(ful)
        x, y = int((red["action"] == a).sum()), int((ful["action"] == a).sum())
        n = n0 + n1
        if n0 == 0 or n1 == 0 or x + y in (0, n):
            continue  # no information about the odds ratio in this context
        u.append(x - n1 * (x + y) / n)
        num += x * (n0 - y) / n
        den += (n1 - x) * y / n
    s = math.sqrt(sum(v * v for v in u)) if u else 0.0
    z = sum(u) / s if s > 0 else math.nan
    # separated: 0 or inf (documented, with a warning); no information at all: NaN
    odds = math.nan if num == den == 0 else math.inf if den == 0 else num / den
    return z, odds


@given(menu_tables())
@settings(max_examples=15)
def test_iia_statistics_equal_the_documented_formulas(df):
    res = iia(df)
    assert len(res.table) > 0
    for row in res.table.itertuples():
        z, odds = reference_comparison(df, row.action_1, row.action_2, row.menu)
        if not row.testable:
            assert math.isnan(row.statistic) and math.isnan(row.pvalue)
            continue
        assert same(row.statistic, z, rel=1e-9) or (math.isnan(z) and row.statistic == 0)
        assert same(row.odds_ratio, odds, rel=1e-9)
        assert 1 / (res.n_resamples + 1) - 1e-12 <= row.pvalue <= row.pvalue_adjusted <= 1
        if not math.isnan(row.ci_low):
            assert row.ci_low <= row.ci_high
    testable = res.table[res.table["testable"]]
    if len(testable):
        assert res.pvalue == testable["pvalue_adjusted"].min()
        assert res.statistic == testable["violates"].mean()
        assert res.confidence_interval.low == res.statistic <= res.confidence_interval.high


@given(menu_tables())
@settings(max_examples=12)
def test_iia_reversing_the_action_order_inverts_the_odds(df):
    """Labels in the reverse sorted order: each comparison becomes b/a, its score and
    log odds ratio change sign, its interval is mirrored, its p-values are unchanged (the
    sign flips give every context the same multiplier whatever the labels)."""
    names = {"defer": "z", "no": "y", "yes": "x"}
    a = iia(df)
    b = iia(df.assign(action=df["action"].map(names),
                      menu=df["menu"].map(lambda m: relabel_menu(m, names))))
    ta = a.table.set_index(a.table["menu"].map(lambda m: relabel_menu(m, names)).map(
        lambda m: "|".join(sorted(m.split("|")))))
    tb = b.table.set_index("menu")
    tb = tb.loc[ta.index]
    assert list(tb["action_1"]) == [names[x] for x in ta["action_2"]]
    for col in ("statistic", "log_odds_ratio"):
        np.testing.assert_allclose(tb[col], -ta[col], rtol=1e-9, atol=1e-12)
    np.testing.assert_allclose(tb["ci_low"], -ta["ci_high"], rtol=1e-9, atol=1e-12)
    np.testing.assert_allclose(tb["ci_high"], -ta["ci_low"], rtol=1e-9, atol=1e-12)
    for col in ("pvalue", "pvalue_adjusted"):
        np.testing.assert_array_equal(tb[col], ta[col])
    same_key(a, b)


# --------------------------------------------------------------------------- prompts
@st.composite
def prompt_tables(draw: st.DrawFn) -> pd.DataFrame:
    """Contexts with a truth, three prompts (one shifted), unequal repetitions, beliefs
    heaped on the 0.05 grid or continuous, a shock shared by the repetitions."""
    n_contexts = draw(st.integers(4, 14))
    heaped = draw(st.booleans())
    seed = draw(st.integers(0, 2**31 - 1))
    rng = np.random.default_rng(seed)
    rows = []
    for c in range(n_contexts):
        q = float(rng.uniform(0.05, 0.95))
        shocks = rng.normal(0, 0.03, size=3)
        for prompt, shift in (("standard", 0.0), ("mse", 0.05), ("absolute", -0.05)):
            for r in range(int(rng.integers(1, 4))):
                b = float(np.clip(q + shift + shocks[r] + rng.normal(0, 0.04), 0, 1))
                if heaped:
                    b = round(b * 20) / 20
                rows.append({"context": c, "prompt": prompt, "repetition": r,
                             "belief": b, "truth": q})
    return pd.DataFrame(rows)


def consistency(df: pd.DataFrame, **kw) -> coherence.ConsistencyResult:
    kw = {"n_resamples": 49, "rng": 0, "truth": "truth", **kw}
    return quiet(coherence.prompt_consistency, df, **kw)


PROMPT_OPTIONS = st.tuples(st.sampled_from(["bootstrap-t", "permutation"]),
                           st.sampled_from(["combined", "shift", "disagreement"]),
                           st.sampled_from(["corrected", "paper"]))


@given(prompt_tables(), PROMPT_OPTIONS, st.randoms(use_true_random=False),
       st.integers(0, 2**16))
@settings(max_examples=20)
def test_prompt_consistency_row_order_names_and_labels_do_not_matter(df, options, shuffle,
                                                                      seed):
    method, alternative, rmse = options
    kw = {"method": method, "alternative": alternative, "rmse": rmse, "rng": seed}
    a = consistency(df, **kw)
    d = shuffled(df, shuffle)
    renamed = pd.DataFrame({"p": d["belief"], "q": d["truth"], "junk": 0.0,
                            "wording": d["prompt"].map({"absolute": "a", "mse": "b",
                                                        "standard": "c"}),
                            "ctx": d["context"].map(lambda c: f"c{c:02d}"),
                            "rep": d["repetition"] + 10})
    b = consistency(renamed, belief="p", prompt="wording", group="ctx", repetition="rep",
                    truth="q", reference="c", **kw)
    same_key(a, b)
    same_numbers(a.table.sort_values("prompt").reset_index(drop=True),
                 b.table.sort_values("prompt").reset_index(drop=True))


@pytest.mark.parametrize("alternative", ["combined", "shift", "disagreement"])
def test_prompt_consistency_permutation_does_not_depend_on_row_order(alternative):
    """Regression: the within-context permutation permuted the rows in the order given,
    so the same rng gave another p-value for the same table in another row order."""
    df = _fixed_prompt_table()
    kw = {"method": "permutation", "alternative": alternative, "n_resamples": 199, "rng": 1}
    a = consistency(df, **kw)
    for order in (np.arange(len(df))[::-1], np.random.default_rng(2).permutation(len(df))):
        b = consistency(df.iloc[order], **kw)
        np.testing.assert_array_equal(a.table["pvalue"], b.table["pvalue"])
        assert a.pvalue == b.pvalue


def test_prompt_consistency_headline_of_tied_variants_does_not_depend_on_row_order():
    """Regression: two variants whose RMSEs are equal in exact arithmetic (heaped beliefs)
    differ by an ulp that follows the row order, and the headline (with its interval)
    went to one or the other: upper end 0.32 or 0.84 for the same table. Ties now go to
    the first variant in label order."""
    cells = {  # context: (standard, mse, absolute) beliefs, one per repetition
        0: ([0.35, 0.35, 0.40], [0.40, 0.40], [0.20]),
        1: ([0.50, 0.60], [0.55, 0.65, 0.70], [0.45, 0.55, 0.60]),
        2: ([0.35], [0.35], [0.40]),
        3: ([0.45], [0.55, 0.65, 0.60], [0.45, 0.45]),
    }
    truth = {0: 0.293769, 1: 0.620690, 2: 0.423061, 3: 0.496310}
    df = _cells_table(cells, ("standard", "mse", "absolute"))
    df["truth"] = df["context"].map(truth)
    kw = {"method": "bootstrap-t", "alternative": "combined", "rmse": "paper",
          "n_resamples": 49, "rng": 0}
    a = consistency(df, **kw)
    rmse = a.table.set_index("prompt")["rmse_reference"]
    assert rmse["absolute"] == pytest.approx(rmse["mse"], rel=1e-12)  # tied
    assert a.headline_prompt == "absolute"  # the first in label order
    for order in (np.arange(len(df))[::-1], np.random.default_rng(2).permutation(len(df))):
        b = consistency(df.iloc[order], **kw)
        assert b.headline_prompt == a.headline_prompt
        same_key(a, b)


def test_prompt_consistency_corrected_terms_that_cancel_give_an_rmse_of_zero():
    """Regression: corrected terms of +0.01 and -0.01 (a shift of 0.1 without noise, and
    noise of 0.02 without a shift; heaped beliefs) have mean 0, but their sum came out at
    5e-19 and the RMSE at 7.6e-10, the square root of round-off."""
    cells = {0: ([0.5, 0.5], [0.6, 0.6]), 1: ([0.5, 0.5], [0.4, 0.6]),
             2: ([0.35, 0.35], [0.45, 0.45]), 3: ([0.7, 0.7], [0.6, 0.8]),
             4: ([0.15, 0.15], [0.05, 0.05]), 5: ([0.85, 0.85], [0.75, 0.95])}
    df = _cells_table(cells, ("standard", "mse"))
    res = quiet(coherence.prompt_consistency, df, n_resamples=49, rng=0)
    assert res.statistic == 0.0
    assert res.table.set_index("prompt").loc["mse", "rmse_reference"] == 0.0


def test_prompt_consistency_mirrored_intervals_of_heaped_beliefs():
    """Regression: a context whose shift is 0 in exact arithmetic (0.7 three times against
    0.7 twice) came out at 1.1e-16, and resamples of contexts whose shifts equal the mean
    had a spread of round-off on one side of the threshold or the other: mirrored beliefs
    gave the shift interval (-0.015, 0.133) and (-0.115, 0.015). A resample's variance that
    is round-off next to the values' size is now no spread."""
    cells = {  # context: (standard, mse, absolute) beliefs, one per repetition
        0: ([0.30], [0.35], [0.25, 0.25]),
        1: ([0.70, 0.60], [0.85, 0.65, 0.75], [0.60, 0.45]),
        2: ([0.35, 0.45, 0.40], [0.35, 0.55, 0.45], [0.25]),
        3: ([0.70, 0.70, 0.70], [0.70, 0.70], [0.55, 0.55, 0.60]),
    }
    df = _cells_table(cells, ("standard", "mse", "absolute"))
    kw = {"method": "bootstrap-t", "alternative": "combined", "n_resamples": 49, "rng": 0}
    a = consistency(df, truth=None, **kw).table.set_index("prompt")
    b = consistency(df.assign(belief=1.0 - df["belief"]), truth=None, **kw).table.set_index(
        "prompt")
    np.testing.assert_allclose(b["shift_ci_low"], -a["shift_ci_high"], rtol=1e-9, atol=1e-12)
    np.testing.assert_allclose(b["shift_ci_high"], -a["shift_ci_low"], rtol=1e-9, atol=1e-12)


def _cells_table(cells: dict[int, tuple[list[float], ...]],
                 prompts: tuple[str, ...]) -> pd.DataFrame:
    """The long table of ``{context: (beliefs under each prompt, one per repetition)}``."""
    return pd.DataFrame([{"context": c, "prompt": p, "repetition": r, "belief": b}
                         for c, runs in cells.items()
                         for p, beliefs in zip(prompts, runs, strict=True)
                         for r, b in enumerate(beliefs)])


def _fixed_prompt_table() -> pd.DataFrame:
    rng = np.random.default_rng(11)
    rows = []
    for c in range(12):
        q = rng.uniform(0.1, 0.9)
        for prompt, shift in (("standard", 0.0), ("mse", 0.03)):
            for r in range(1 + c % 3):
                rows.append({"context": c, "prompt": prompt, "repetition": r, "truth": q,
                             "belief": round(float(np.clip(q + shift + rng.normal(0, 0.05),
                                                           0, 1)) * 20) / 20})
    return pd.DataFrame(rows)


@given(prompt_tables(), PROMPT_OPTIONS)
@settings(max_examples=15)
def test_prompt_consistency_mirrored_beliefs(df, options):
    """Beliefs and truths 1 - p: every shift changes sign (its interval is mirrored),
    spreads, RMSEs and p-values are unchanged for the same rng (the bootstrap resamples
    contexts; the permutation's canonical row order depends on the beliefs, so only its
    figures, not its p-values, are compared)."""
    method, alternative, rmse = options
    kw = {"method": method, "alternative": alternative, "rmse": rmse}
    a = consistency(df, **kw)
    b = consistency(df.assign(belief=1.0 - df["belief"], truth=1.0 - df["truth"]), **kw)
    ta, tb = a.table, b.table
    assert list(ta["prompt"]) == list(tb["prompt"])
    np.testing.assert_allclose(tb["shift"], -ta["shift"], rtol=1e-7, atol=1e-10)
    np.testing.assert_allclose(tb["shift_ci_low"], -ta["shift_ci_high"], rtol=1e-7,
                               atol=1e-10)
    pvalues = ("pvalue", "pvalue_shift", "pvalue_disagreement")
    for col in ("std", "rmse_reference", "rmse_truth", *(pvalues * (method != "permutation"))):
        np.testing.assert_allclose(tb[col], ta[col], rtol=1e-7, atol=1e-10)
    if method != "permutation":
        assert same(a.pvalue, b.pvalue, rel=1e-9)


@given(prompt_tables())
@settings(max_examples=15)
def test_prompt_consistency_figures_equal_loops_over_contexts(df):
    """``shift`` is the mean over contexts of the variant's mean belief minus the
    reference's, ``rmse='paper'`` the root mean square of those differences, ``std`` the
    mean of the per-cell standard deviations; p-values are Monte Carlo p-values (NaN
    below five contexts, too few for the bootstrap-t)."""
    res = consistency(df, rmse="paper", n_resamples=29)
    tested = df["context"].nunique() >= 5
    cells = df.groupby(["context", "prompt"])["belief"]
    mean, sd = cells.mean().unstack(), cells.std(ddof=1).unstack()
    for row in res.table.itertuples():
        if row.prompt == "standard":
            assert math.isnan(row.pvalue) and math.isnan(row.shift)
        else:
            d = (mean[row.prompt] - mean["standard"]).dropna()
            assert same(row.shift, float(d.mean()), rel=1e-9)
            assert same(row.rmse_reference, math.sqrt(float((d * d).mean())), rel=1e-9)
            assert (1 / 30 - 1e-12 <= row.pvalue <= 1.0) if tested else math.isnan(row.pvalue)
            assert row.shift_ci_low <= row.shift <= row.shift_ci_high
        assert same(row.std, float(sd[row.prompt].dropna().mean()), rel=1e-9)
    assert (1 / 30 - 1e-12 <= res.pvalue <= 1.0) if tested else math.isnan(res.pvalue)


# --------------------------------------------------------------------------- leakage
@st.composite
def leaky_tables(draw: st.DrawFn) -> pd.DataFrame:
    """A small study of the leaky agent (a private signal about the outcome), heaped
    beliefs, two repetitions per context."""
    seed = draw(st.integers(0, 2**16))
    n = draw(st.integers(12, 20))
    strength = draw(st.sampled_from([0.0, 0.6]))
    agent = coherence.Agent.leaky(strength=strength) if strength else "rational"
    study = coherence.simulate(agent, n_contexts=n, n_repetitions=2, rng=seed)
    return study.data.drop(columns=["truth", "latent_belief", "prompt"])


def leakage(df: pd.DataFrame, **kw) -> coherence.LeakageResult:
    kw = {"engine": "logistic", "n_splits": 3, "n_resamples": 20, "n_permutations": 9,
          "rng": 0, **kw}
    return quiet(coherence.leakage_test, df, **kw)


def test_leakage_refuses_an_action_of_one_context_in_any_row_order():
    """'defer' chosen in one context of 12 (a table the property test below drew): with
    three folds one training part lacks it, and the test says so, whatever the order of
    the rows and the names of the columns."""
    beliefs = [0.25, 0.35, 0.7, 0.95, 0.4, 0.8, 0.1, 0.5, 0.9, 0.65, 0.2, 0.05]
    actions = ["no", "no", "yes", "yes", "yes", "yes", "no", "no", "yes", "no", "defer", "no"]
    df = pd.DataFrame({"context": np.repeat(np.arange(12), 2), "repetition": [0, 1] * 12,
                       "belief": np.repeat(beliefs, 2), "action": np.repeat(actions, 2),
                       "outcome": np.repeat([0, 0, 0, 1, 0, 1, 0, 0, 1, 0, 0, 0], 2)})
    df.loc[3, "action"] = "yes"
    renamed = df.iloc[::-1].rename(columns={"belief": "p", "action": "choice"})
    for table, names in ((df, {}), (renamed, {"belief": "p", "action": "choice"})):
        column = names.get("action", "action")
        with pytest.raises(ValueError, match=f"'defer' of column '{column}' are absent from "
                           "the training part"):
            leakage(table, **names)


@given(leaky_tables(), st.randoms(use_true_random=False), st.integers(0, 2**16))
@settings(max_examples=6)
def test_leakage_row_order_names_and_labels_do_not_matter(df, shuffle, seed):
    d = shuffled(df, shuffle)
    renamed = pd.DataFrame({"p": d["belief"], "choice": d["action"].map(ACTION_NAMES),
                            "y": d["outcome"], "junk": 3.0,
                            "ctx": d["context"].map(lambda c: f"c{c:03d}")})
    names = {"belief": "p", "action": "choice", "outcome": "y", "group": "ctx"}
    try:
        a = leakage(df, rng=seed)
    except ValueError as err:  # an action of one context cannot spread over the folds:
        assert "absent from the training part" in str(err)  # refused in any order
        with pytest.raises(ValueError, match="absent from the training part"):
            leakage(renamed, rng=seed, **names)
        return
    b = leakage(renamed, rng=seed, **names)
    same_key(a, b, rel=1e-6)
    np.testing.assert_allclose(a.null_distribution, b.null_distribution, rtol=1e-6,
                               atol=1e-9)
    if not math.isnan(a.pvalue):
        kept = a.null_distribution[~np.isnan(a.null_distribution)]
        assert 1 / (kept.size + 1) - 1e-12 <= a.pvalue <= 1.0
    ci = a.confidence_interval
    if not math.isnan(ci.low):
        assert ci.low <= ci.high
