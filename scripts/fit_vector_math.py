#!/usr/bin/env python3
"""Fits the polynomials of compiler/codegen/llvm/vector_math.cpp and prints them.

Each is a weighted least-squares fit (relative error) on Chebyshev nodes, in double
precision, rounded to float32: close to minimax, and what the code's max-ulp figures
(tests/correctness/test_vector_math.cpp) were measured with. Needs numpy (Debian's
python3-numpy): /usr/bin/python3 scripts/fit_vector_math.py
"""
import math

import numpy as np


def fit(g, lo, hi, degree, var=lambda x: x, nodes=4000):
    k = np.arange(nodes)
    x = (lo + hi) / 2 + (hi - lo) / 2 * np.cos(np.pi * (k + 0.5) / nodes)
    y = np.array([g(v) for v in x])
    a = np.vander(var(x), degree + 1, increasing=True)
    w = 1 / np.abs(y)
    c, *_ = np.linalg.lstsq(a * w[:, None], y * w, rcond=None)
    return [float(np.float32(v)) for v in c]


def show(name, coefficients):
    print(f"// {name}, lowest degree first")
    print("{" + ", ".join(f"{c:.9g}f" for c in coefficients) + "}")


ln2 = math.log(2)
# exp(r) = 1 + r + r^2 P(r), |r| <= ln2/2
show("exp: P(r)", fit(lambda r: (math.exp(r) - 1 - r) / r**2, -ln2 / 2, ln2 / 2, 4))
# log(1+z) = z - z^2/2 + z^3 P(z), 1+z in [sqrt(1/2), sqrt(2))
show("log: P(z)", fit(lambda z: (math.log1p(z) - z + z * z / 2) / z**3, math.sqrt(0.5) - 1, math.sqrt(2) - 1, 8))
# tanh(x) = x + x u P(u), u = x^2, |x| < 0.625
show("tanh: P(u)", fit(lambda x: (math.tanh(x) - x) / x**3, 1e-4, 0.625, 5, var=lambda x: x * x))
# erf(x) = x + x P(u), u = x^2, |x| < 0.921875
show("erf small: P(u)", fit(lambda x: math.erf(x) / x - 1, 1e-6, 0.921875, 6, var=lambda x: x * x))
# erfc(a) = exp(Q(a)), 0.921875 <= a <= 3.925 (above, erf rounds to 1)
show("erfc: Q(a)", fit(lambda a: math.log(math.erfc(a)), 0.921875, 3.925, 8))
