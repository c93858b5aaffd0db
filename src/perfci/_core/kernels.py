"""Compiled loops of the resampling engine, and of the grid posterior's person-rate draws.

Each resampling kernel fills the resampled cell counts of one batch of resamples, resample
by resample. The person schemes' kernels read persons drawn in NumPy (``picks``: which
person each of the m draws of a resample took) and take the texts from one NumPy
generator (`rng`), consumed in resample order; the iid kernel (:func:`iid_cells`) reads
C - 1 uniforms per resample, drawn in NumPy in the same order, or, for the data sets of
a batch whose keyed Philox streams have not been handed out, drawn here from their keys
(:func:`iid_cells_keyed`, :func:`philox_doubles`: NumPy's Philox4x64-10, word for word).
Either way the draws do not depend on how resamples are split into batches.

Only IEEE basic arithmetic, exact integer arithmetic (Philox's 64 x 64 -> 128-bit
products, one LLVM ``i128`` multiply) and the generator's own methods (NumPy's
algorithms, as numba compiles them) are used; numba's defaults (no fast-math, so no
reassociation or fused multiply-add) keep the results the same on every x86-64 CPU.
The tables these kernels read are computed beside them, in
:mod:`perfci._core.cell_draws`, or here from basic arithmetic (:func:`mode_tables`,
:func:`window_tables`).

:func:`grid_cells` and :func:`beta_rates` serve the grid posterior's draws
(:mod:`perfci._core.grid`): the same results as the NumPy expressions they replace
(a cumulative sum, a sorted search, ``Generator.beta`` on arrays of parameters), without
their temporaries.
"""

from __future__ import annotations

import numba
import numpy as np
from llvmlite import ir
from numba.core import types
from numba.extending import intrinsic

__all__ = [
    "alias_table",
    "cluster_totals",
    "grid_cells",
    "iid_cells",
    "iid_cells_keyed",
    "kind_resamples",
    "mode_tables",
    "part_sums",
    "philox_doubles",
    "tree_resamples",
    "window_tables",
    "beta_rates",
]


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
def mode_tables(size, shares, mode, pmf, cdf):  # pragma: no cover - compiled
    """Binomial(n, p) at its mode for n = 0..size and each p in `shares`, by recursion in n.

    Row c of the tables holds, for n = 0..size, a mode k of Binomial(n, shares[c]),
    P(K = k) and P(K <= k) (rows of p = 0 or 1 are left alone). From n to n + 1 at the
    same k, P_{n+1}(k) = P_n(k) (n + 1) q / (n + 1 - k) and
    F_{n+1}(k) = F_n(k) - p P_n(k); the mode then moves up by
    P(k + 1) = P(k) (n + 1 - k) p / ((k + 1) q). Only basic arithmetic: the tables are the
    same on every CPU, and their relative error grows by a few units of round-off per
    step (about 1e-14 at n = 500).
    """
    for c in range(shares.size):
        p = shares[c]
        if p <= 0.0 or p >= 1.0:
            continue  # drawn without a table
        q = 1.0 - p
        k = 0
        prob = 1.0
        below = 1.0
        mode[c, 0], pmf[c, 0], cdf[c, 0] = 0, 1.0, 1.0
        for n in range(size):
            below -= p * prob
            prob = prob * (n + 1) * q / (n + 1 - k)
            top = min(int((n + 2) * p), n + 1)  # floor((n + 2) p), the mode of n + 1
            while k < top:
                prob = prob * (n + 1 - k) * p / ((k + 1) * q)
                k += 1
                below += prob
            mode[c, n + 1], pmf[c, n + 1], cdf[c, n + 1] = k, prob, below


@numba.njit(cache=True)
def _invert_from_the_mode(u, n, mode, pmf_mode, cdf_mode, odds, reciprocal):  # pragma: no cover
    """Binomial(n, p) at the uniform u: the smallest k with F(k) > u, searched from the mode.

    As :func:`_from_the_mode`, with each step's ratio P(k +- 1) / P(k) formed apart from
    the running P(k) (one multiplication on the search's chain of dependent operations,
    not three or a division): the same inverse up to round-off, about twice as fast.
    """
    k = mode
    pmf = pmf_mode
    if u < cdf_mode:
        below = cdf_mode - pmf  # F(k - 1)
        inverse_odds = 1.0 / odds
        while k > 0 and below > u:
            pmf *= k * inverse_odds * reciprocal[n - k + 1]  # P(K = k - 1)
            k -= 1
            below -= pmf
        return k
    upto = cdf_mode
    while k < n and upto <= u:
        pmf *= (n - k) * odds * reciprocal[k + 1]  # P(K = k + 1)
        k += 1
        upto += pmf
    return k


#: Outcomes k of a binomial whose CDF values one row of the window tables holds.
WINDOW = 32


@numba.njit(cache=True)
def window_tables(
    shares, mode, pmf, cdf, reciprocal, first, base, below, window
):  # pragma: no cover - compiled
    """CDF windows of Binomial(n, p) around its mode, for the n each stage meets most.

    Stage c's rows are n = first[c], first[c] + 1, ..., first[c + 1] - first[c] of them
    (row ``first[c] + j`` is n = ``base[c] + j``; rows of p = 0 or 1 are left alone).
    A row holds ``window[row, i] = F(lo + i)`` for i < :data:`WINDOW` (1 past n) and
    ``below[row] = F(lo - 1)``, lo = max(0, mode - WINDOW / 2), walked from the mode's
    P(K = mode) and F(mode) of :func:`mode_tables` by P(k - 1) = P(k) k q / ((n - k + 1) p)
    and P(k + 1) = P(k) (n - k) p / ((k + 1) q) (``reciprocal[j] = 1 / j``).
    """
    half = WINDOW // 2
    for c in range(shares.size):
        p = shares[c]
        if p <= 0.0 or p >= 1.0:
            continue
        odds = p / (1.0 - p)
        inverse_odds = (1.0 - p) / p
        for row in range(first[c], first[c + 1]):
            n = base[c] + row - first[c]
            k = mode[c, n]
            prob = pmf[c, n]
            upto = cdf[c, n]  # F(k)
            lo = max(0, k - half)
            while k > lo:  # down to lo: F(k - 1) = F(k) - P(k)
                upto -= prob
                prob *= k * inverse_odds * reciprocal[n - k + 1]
                k -= 1
            below[row] = upto - prob if lo > 0 else 0.0  # F(lo - 1)
            for i in range(WINDOW):
                if k > n:
                    window[row, i] = 1.0
                    continue
                window[row, i] = upto
                prob *= (n - k) * odds * reciprocal[k + 1]
                k += 1
                upto += prob


@numba.njit(cache=True)
def iid_cells(
    size, conditional, odds, mode, pmf, cdf, reciprocal, first, base, below, window, u, columns, out
):  # pragma: no cover - compiled
    """Multinomial(size, shares) resamples of texts from uniforms, as conditional binomials.

    Cell c is written to column ``columns[c]`` of `out` (the other columns are left as
    they are: pooled cells' columns hold 0).

    Cell c of resample r is Binomial(texts left, ``conditional[c]``), the share of cell c
    among the cells from c on, inverted at ``u[r, c]``; the last cell takes the rest. The
    inverse is read off a CDF window of :func:`window_tables` when the n has one and u
    falls inside it (the count of the window's CDF values at most u), else
    searched from the mode (:func:`_invert_from_the_mode`, tables of :func:`mode_tables`).
    Every resample reads its C - 1 uniforms, used or not (a certain cell, or none left),
    so that resample r's cells depend on its own row of `u` only.
    """
    stages = conditional.size
    for r in range(out.shape[0]):
        left = size
        for c in range(stages):
            x = 0
            p = conditional[c]
            v = u[r, c]
            if left > 0 and p >= 1.0:
                x = left
            elif left > 0 and p > 0.0:
                row = first[c] + left - base[c]
                if first[c] <= row < first[c + 1] and below[row] <= v < window[row, WINDOW - 1]:
                    # how many of the window's CDF values are <= v: a binary search
                    # without branches on v (steps of 16, 8, 4, 2, 1; v < the last value)
                    at = 0
                    step = WINDOW // 2
                    while step > 0:
                        if window[row, at + step - 1] <= v:
                            at += step
                        step >>= 1
                    x = min(mode[c, left] - min(mode[c, left], WINDOW // 2) + at, left)
                else:
                    x = _invert_from_the_mode(
                        v, left, mode[c, left], pmf[c, left], cdf[c, left], odds[c], reciprocal
                    )
            out[r, columns[c]] = x
            left -= x
        out[r, columns[stages]] = left


# Philox4x64-10's constants (Random123, as numpy/random/src/philox/philox.h)
_PHILOX_M0, _PHILOX_M1 = np.uint64(0xD2E7470EE14C6C93), np.uint64(0xCA5A826395121157)
_PHILOX_W0, _PHILOX_W1 = np.uint64(0x9E3779B97F4A7C15), np.uint64(0xBB67AE8584CAA73B)


@intrinsic
def _mulhilo(typingctx, a, b):  # pragma: no cover - compiled
    """High and low words of the 128-bit product of uint64 `a` and `b` (one LLVM i128 mul)."""
    signature = types.UniTuple(types.uint64, 2)(types.uint64, types.uint64)

    def codegen(context, builder, sig, args):
        wide = ir.IntType(128)
        product = builder.mul(builder.zext(args[0], wide), builder.zext(args[1], wide))
        high = builder.trunc(builder.lshr(product, ir.Constant(wide, 64)), ir.IntType(64))
        low = builder.trunc(product, ir.IntType(64))
        return context.make_tuple(builder, sig.return_type, (high, low))

    return signature, codegen


@numba.njit(cache=True)
def philox_doubles(key0, key1, first_word, out):  # pragma: no cover - compiled
    """Write words ``first_word, ...`` of a Philox4x64-10 stream as doubles into 1-D `out`.

    The stream of ``Generator(Philox(key=[key0, key1])).random()``: block j is the
    counter ``(j + 1, 0, 0, 0)``, four 64-bit words, each ``(word >> 11) * 2**-53``
    (``tests/test_streams.py`` checks it against NumPy).
    """
    total = out.size
    block = first_word // 4
    skip = first_word % 4
    i = 0
    scale = 1.0 / 9007199254740992.0
    eleven = np.uint64(11)
    while i < total:
        c0 = np.uint64(block + 1)
        c1 = np.uint64(0)
        c2 = np.uint64(0)
        c3 = np.uint64(0)
        k0 = np.uint64(key0)
        k1 = np.uint64(key1)
        for rnd in range(10):
            if rnd:
                k0 += _PHILOX_W0
                k1 += _PHILOX_W1
            # an intrinsic: numba passes the typing context (mypy sees three arguments)
            hi0, lo0 = _mulhilo(c0, _PHILOX_M0)  # type: ignore[call-arg,var-annotated]
            hi1, lo1 = _mulhilo(c2, _PHILOX_M1)
            c0, c1, c2, c3 = hi1 ^ c1 ^ k0, lo1, hi0 ^ c3 ^ k1, lo0
        block += 1
        if skip == 0 and i + 4 <= total:
            out[i] = np.float64(c0 >> eleven) * scale
            out[i + 1] = np.float64(c1 >> eleven) * scale
            out[i + 2] = np.float64(c2 >> eleven) * scale
            out[i + 3] = np.float64(c3 >> eleven) * scale
            i += 4
            continue
        words = (c0, c1, c2, c3)
        for j in range(skip, 4):
            if i < total:
                out[i] = np.float64(words[j] >> eleven) * scale
                i += 1
        skip = 0


@numba.njit(cache=True)
def iid_cells_keyed(
    chosen,
    sizes,
    conditional,
    odds,
    first,
    base,
    keys,
    n_resamples,
    mode,
    pmf,
    cdf,
    reciprocal,
    below,
    window,
    columns,
    scratch,
    out,
):  # pragma: no cover - compiled
    """:func:`iid_cells` of several data sets, each from its own Philox stream, in one call.

    Data set ``chosen[j]`` fills rows ``j * n_resamples ...`` of `out` from the uniforms of
    ``Generator(Philox(key=keys[j]))``, read in the order
    ``rng.random((n_resamples, stages))`` gives them, so its cells equal those of
    :func:`iid_cells` given that generator's draws; its tables are computed here, into
    the shared buffers, as :func:`mode_tables` and :func:`window_tables` compute them.
    `scratch` (1-D, a multiple of `stages` long) holds one block of uniforms at a time.
    """
    stages = conditional.shape[1]
    chunk = scratch.size // stages
    for j in range(chosen.size):
        k = chosen[j]
        mode_tables(sizes[k], conditional[k], mode, pmf, cdf)
        window_tables(conditional[k], mode, pmf, cdf, reciprocal, first[k], base[k], below, window)
        row = j * n_resamples
        for start in range(0, n_resamples, chunk):
            b = min(chunk, n_resamples - start)
            flat = scratch[: b * stages]
            philox_doubles(keys[j, 0], keys[j, 1], start * stages, flat)
            u = flat.reshape((b, stages))
            iid_cells(
                sizes[k],
                conditional[k],
                odds[k],
                mode,
                pmf,
                cdf,
                reciprocal,
                first[k],
                base[k],
                below,
                window,
                u,
                columns,
                out[row + start : row + start + b],
            )


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
    direct_upto,
    text_start,
    text_cell,
    rng,
    out,
):  # pragma: no cover - compiled
    """Hierarchical resamples, one person taken w times at a time.

    A person taken at most ``direct_upto[i]`` times has its w n_i texts drawn one by one
    from its own, uniformly with replacement (``text_cell[text_start[i]:][:n_i]`` holds
    the cell of each of its texts): cheaper than the binomials when a person has few
    texts spread over many cells. Otherwise:

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
            if w <= direct_upto[i]:
                start = text_start[i]
                for _ in range(n):
                    out[r, text_cell[start + int(rng.random() * sizes[i])]] += 1
                continue
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


@numba.njit(cache=True)
def beta_rates(mu, kappa, successes, failures, rng, out):  # pragma: no cover - compiled
    """Person rates ``out[d, i] = p_di``, one Beta variate per entry.

    p_di ~ Beta(mu_d kappa_d + y_i, (1 - mu_d) kappa_d + n_i - y_i), drawn draw by draw
    and, within a draw, person by person: the order (and the arithmetic of the
    parameters) of ``rng.beta(a, b)`` on the ``(draws, persons)`` arrays ``a`` and ``b``,
    without holding them.
    """
    for d in range(out.shape[0]):
        pooled = mu[d] * kappa[d]
        rest = (1 - mu[d]) * kappa[d]
        for i in range(out.shape[1]):
            out[d, i] = rng.beta(pooled + successes[i], rest + failures[i])


@numba.njit(cache=True)
def grid_cells(mass, u, cdf, out):  # pragma: no cover - compiled
    """Cells drawn in proportion to `mass` by the uniforms `u`: an inverse-CDF search.

    ``cdf`` (the size of `mass`) receives the normalized cumulative masses, summed in
    order as :func:`numpy.cumsum` sums them; ``out[d]`` is the first cell whose CDF
    exceeds ``u[d]`` (the last cell at most), as ``np.searchsorted(cdf, u, "right")``.
    """
    total = 0.0
    for c in range(mass.size):
        total += mass[c]
        cdf[c] = total
    last = cdf[mass.size - 1]
    for c in range(mass.size):
        cdf[c] = cdf[c] / last
    for d in range(u.size):
        lo, hi = 0, mass.size  # the answer lies in [lo, hi]
        while lo < hi:
            mid = (lo + hi) >> 1
            if cdf[mid] <= u[d]:
                lo = mid + 1
            else:
                hi = mid
        out[d] = min(lo, mass.size - 1)
