"""The SciPy-free normal quantile of the analytic intervals, against SciPy's."""

import numpy as np
import pytest
from scipy import special, stats

import perfci as pc
from perfci import analytic
from perfci._core.normal import two_sided_z

# Both sides are accurate to a few units in the last place: statistics.NormalDist uses
# Wichura's AS 241 and scipy.special.ndtri Cephes' ndtri; measured against 40-digit
# mpmath (sqrt(2) * erfinv(2q - 1)) on 3,000 random q in (0.5, 1), the largest errors
# were 4.9 and 3.8 ulp. 4e-15 relative is about 9 ulp at z near 2.
RTOL = 4e-15


def test_two_sided_z_equals_scipy_to_double_precision(rng):
    level = np.concatenate(
        [rng.uniform(0.01, 1, size=100_000), [0.5, 0.8, 0.9, 0.95, 0.98, 0.99, 0.999, 1 - 1e-10]]
    )
    z = two_sided_z(level)
    # Reference: scipy.special.ndtri(0.5 + level / 2) and scipy.stats.norm.ppf of the
    # same (what the analytic intervals used before).
    np.testing.assert_allclose(z, special.ndtri(0.5 + level / 2), rtol=RTOL, atol=0)
    np.testing.assert_allclose(z, stats.norm.ppf(0.5 + level / 2), rtol=RTOL, atol=0)
    # scipy.stats.norm.ppf(0.975) = 1.959963984540054
    assert two_sided_z(0.95) == pytest.approx(1.959963984540054, rel=RTOL)


def test_two_sided_z_keeps_the_shape_and_gives_ndtris_ends():
    level = np.array([[0.9, 0.95, 0.9], [0.95, 0.95, 0.9]])
    z = two_sided_z(level)
    assert z.shape == (2, 3)
    np.testing.assert_array_equal(z[level == 0.9], two_sided_z(0.9))
    assert two_sided_z(np.array(0.95)).shape == ()
    assert two_sided_z(np.empty((0, 2))).shape == (0, 2)
    # the largest level below 1: 0.5 + c/2 rounds to 1, where ndtri is infinite
    top = np.nextafter(1.0, 0.0)
    assert two_sided_z(top) == special.ndtri(0.5 + top / 2) == np.inf
    # a level so small that 0.5 + c/2 is 0.5
    assert two_sided_z(1e-300) == special.ndtri(0.5) == 0.0


@pytest.mark.parametrize("method", ["wald", "wilson", "agresti_coull", "agresti_coull_plus4"])
def test_normal_methods_equal_the_scipy_path(method, rng, monkeypatch):
    n = rng.integers(1, 2000, size=5000).astype(float)
    x = np.floor(n * rng.uniform(size=n.size))
    x[:100], x[100:200] = 0, n[100:200]
    level = rng.uniform(0.5, 0.9999, size=n.size)
    cases = [(x, n, level), (x, n, 0.95), (264, 300, 0.95)]
    ours = [pc.proportion_ci(a, b, method=method, confidence_level=c) for a, b, c in cases]
    # the scipy path: z from scipy.special.ndtri, as the module computed it before
    monkeypatch.setattr(analytic, "_normal_quantile", lambda c: special.ndtri(0.5 + c / 2))
    for (a, b, c), got in zip(cases, ours, strict=True):
        ref = pc.proportion_ci(a, b, method=method, confidence_level=c)
        np.testing.assert_allclose(got.low, ref.low, rtol=1e-14, atol=1e-16)
        np.testing.assert_allclose(got.high, ref.high, rtol=1e-14, atol=1e-16)
        np.testing.assert_array_equal(got.clipped, ref.clipped)
