"""Compiled loops of the resampling engine: the hierarchical bootstrap's within-person draws.

Each kernel fills the resampled cell counts of one batch of resamples, resample by
resample, from persons drawn in NumPy (``picks``: which person each of the m draws of a
resample took) and one NumPy generator (`rng`) for the texts. The generator is consumed
in resample order, so the draws do not depend on how resamples are split into batches.

Only IEEE basic arithmetic and the generator's own methods (NumPy's algorithms, as numba
compiles them) are used; numba's defaults (no fast-math, so no reassociation or fused
multiply-add) keep the results the same on every x86-64 CPU. The tables these kernels read
are computed beside them, in :mod:`perfci._core.resampling`.
"""

from __future__ import annotations

import numba
import numpy as np

__all__ = ["alias_table", "cluster_totals", "kind_resamples", "part_sums", "tree_resamples"]


@numba.njit(cache=True)
def _binomial(rng, n, p):  # pragma: no cover - compiled
    """Binomial(n, p): by inversion from 0 when n min(p, 1 - p) <= 10, else NumPy's.

    NumPy's set-up costs about 100 ns a draw with new parameters; inversion with
    (1 - p)^n by repeated squaring (basic arithmetic only) takes about n p steps.
    """
    if n == 0 or p <= 0.0:
        return 0
    if p >= 1.0:
        return n
    flip = p > 0.5
    small = 1.0 - p if flip else p
    if n * small > 10.0:
        return rng.binomial(n, p)
    q = 1.0 - small
    pmf = 1.0  # q^n
    base = q
    e = n
    while e > 0:
        if e & 1:
            pmf *= base
        base *= base
        e >>= 1
    odds = small / q
    u = rng.random()
    k = 0
    upto = pmf
    while upto <= u and k < n:
        pmf = pmf * (n - k) * odds / (k + 1)
        k += 1
        upto += pmf
    return n - k if flip else k


@numba.njit(cache=True)
def _from_the_mode(u, n, mode, pmf_mode, cdf_mode, odds, reciprocal):  # pragma: no cover
    """Binomial(n, p) by inversion, searching from the mode: the smallest k with F(k) > u.

    `pmf_mode` and `cdf_mode` are P(K = mode) and P(K <= mode); `odds` is p / (1 - p);
    ``reciprocal[j] = 1 / j`` (multiplications, not divisions, in the loop). The search
    takes about 0.8 standard deviations of steps on average.
    """
    k = mode
    pmf = pmf_mode
    if u < cdf_mode:
        below = cdf_mode - pmf  # F(k - 1)
        while k > 0 and below > u:
            pmf = pmf * k * reciprocal[n - k + 1] / odds  # P(K = k - 1)
            k -= 1
            below -= pmf
        return k
    upto = cdf_mode
    while k < n and upto <= u:
        pmf = pmf * (n - k) * odds * reciprocal[k + 1]  # P(K = k + 1)
        k += 1
        upto += pmf
    return k


@numba.njit(cache=True)
def _count_picks(picks, r, taken):  # pragma: no cover - compiled
    taken[:] = 0
    for j in range(picks.shape[1]):
        taken[picks[r, j]] += 1


@numba.njit(cache=True)
def cluster_totals(picks, cells, out):  # pragma: no cover - compiled
    """Cell totals of cluster resamples: the sum of the picked persons' cells."""
    for r in range(picks.shape[0]):
        for j in range(picks.shape[1]):
            row = cells[picks[r, j]]
            for c in range(row.size):
                out[r, c] += row[c]


@numba.njit(cache=True)
def kind_resamples(picks, sizes, kind, conditional, rng, out):  # pragma: no cover - compiled
    """Hierarchical resamples when persons fall into few kinds (equal cell shares).

    Persons with the same cell shares s pool: w_i n_i texts of each taken person of a
    kind are Multinomial(sum of w_i n_i, s) together, drawn as C - 1 conditional
    binomials per kind and resample instead of per person.
    """
    n_kinds, stages = conditional.shape
    texts = np.zeros(n_kinds, np.int64)
    for r in range(picks.shape[0]):
        texts[:] = 0
        for j in range(picks.shape[1]):
            person = picks[r, j]
            texts[kind[person]] += sizes[person]
        for k in range(n_kinds):
            left = texts[k]
            for c in range(stages):
                if left == 0:
                    break
                x = _binomial(rng, left, conditional[k, c])
                out[r, c] += x
                left -= x
            out[r, stages] += left


@numba.njit(cache=True)
def tree_resamples(
    picks,
    sizes,
    root,
    odds,
    mode,
    pmf_mode,
    cdf_mode,
    by_mode,
    reciprocal,
    conditional,
    halves,
    group,
    group_share,
    group_cell,
    rng,
    out,
):  # pragma: no cover - compiled
    """Hierarchical resamples, one person taken w times at a time.

    The cells split in two halves (``halves[h] = (first cell, end)``). A person taken w
    times brings W = w n_i texts; the first half gets Binomial(W, root_i) of them, drawn
    from the mode with the tables of (person, w) where ``by_mode[i, w]``, else by the
    generator's binomial (``reciprocal[j] = 1 / j`` for the largest n from the mode).
    Within a half of more than two cells, the cells but the last
    two are drawn per person (conditional binomials); the last two cells of every half
    pool over persons with the same share of the first of them (`group`), one binomial
    per such group and resample.
    """
    m = sizes.size
    w_max = mode.shape[1] - 1
    taken = np.zeros(m, np.int64)
    pooled = np.zeros(group_share.size, np.int64)
    for r in range(picks.shape[0]):
        _count_picks(picks, r, taken)
        pooled[:] = 0
        for i in range(m):
            w = taken[i]
            if w == 0:
                continue
            n = w * sizes[i]
            if w <= w_max and by_mode[i, w]:
                first = _from_the_mode(
                    rng.random(),
                    n,
                    mode[i, w],
                    pmf_mode[i, w],
                    cdf_mode[i, w],
                    odds[i],
                    reciprocal,
                )
            else:
                first = _binomial(rng, n, root[i])
            for h in range(2):
                left = first if h == 0 else n - first
                lo, hi = halves[h, 0], halves[h, 1]
                if hi - lo == 1:
                    out[r, lo] += left
                    continue
                for c in range(lo, hi - 2):
                    if left == 0:
                        break
                    x = _binomial(rng, left, conditional[i, c])
                    out[r, c] += x
                    left -= x
                pooled[group[i, h]] += left
        for g in range(group_share.size):
            left = pooled[g]
            if left == 0:
                continue
            x = _binomial(rng, left, group_share[g])
            out[r, group_cell[g]] += x
            out[r, group_cell[g] + 1] += left - x


@numba.njit(cache=True)
def alias_table(pmf):  # pragma: no cover - compiled
    """Walker's alias table of a probability vector (Vose's construction).

    Drawing index j = floor(u1 K), then j if u2 < ``share[j]`` else ``alias[j]``, takes
    each index with probability ``pmf / pmf.sum()`` (u1, u2 independent uniforms; see
    :func:`_alias_draw` for one uniform serving both).
    """
    size = pmf.size
    scaled = pmf * (size / pmf.sum())
    share = np.ones(size)
    alias = np.arange(size).astype(np.int32)
    small = np.empty(size, np.int64)
    large = np.empty(size, np.int64)
    n_small = n_large = 0
    for i in range(size):
        if scaled[i] < 1.0:
            small[n_small] = i
            n_small += 1
        else:
            large[n_large] = i
            n_large += 1
    while n_small > 0 and n_large > 0:
        n_small -= 1
        s = small[n_small]
        g = large[n_large - 1]
        share[s] = scaled[s]
        alias[s] = g
        scaled[g] = (scaled[g] + scaled[s]) - 1.0
        if scaled[g] < 1.0:
            n_large -= 1
            small[n_small] = g
            n_small += 1
    # what is left has a share of 1 up to round-off
    return share, alias


@numba.njit(cache=True)
def _alias_draw(u, share, alias):  # pragma: no cover - compiled
    """Index j = floor(u K), then j or its alias by the fraction u K - j.

    The fraction is uniform on a grid of spacing K 2^-53, so each index's probability
    is the table's to within 2^-53: one uniform serves both steps.
    """
    scaled = u * share.size
    j = min(int(scaled), share.size - 1)
    return j if scaled - j < share[j] else alias[j]


@numba.njit(cache=True)
def part_sums(u, full, last, texts_base, out):  # pragma: no cover - compiled
    """Pooled proportions of resamples made of q parts: q - 1 "full" parts and a last one.

    `full` and `last` are (share, alias, texts, successes) alias tables of a part's
    (texts, successes), texts counted above their least possible value; the resample's
    texts are `texts_base` more. Part j of resample r is drawn with the uniform
    ``u[r, j]``; the resample's proportion is the parts' successes over their texts.
    """
    last_part = u.shape[1] - 1
    for r in range(u.shape[0]):
        texts = texts_base
        hits = 0
        for j in range(last_part):
            c = _alias_draw(u[r, j], full[0], full[1])
            texts += full[2][c]
            hits += full[3][c]
        c = _alias_draw(u[r, last_part], last[0], last[1])
        texts += last[2][c]
        hits += last[3][c]
        out[r] = hits / texts
