#!/usr/bin/env python3
"""Reference values for privacy/accountant_test.go, computed independently of
the Go code: plain Python floats, a golden-section search over log(alpha - 1)
instead of the Go code's bisection on the derivative, and closed forms.

Run from the repository root:  python3 privacy/testdata/reference.py > privacy/testdata/conversions.json
"""
import json
import math


def log_delta_at(rho, eps, alpha):
    # ln of exp((a-1)(a rho - eps) + a ln(1 - 1/a)) / (a - 1)
    return (alpha - 1) * (alpha * rho - eps) + alpha * math.log1p(-1 / alpha) - math.log(alpha - 1)


def tight_delta(rho, eps):
    """min over alpha > 1 of the CKS 2020 Prop. 12 bound (golden section on t = ln(alpha-1))."""
    lo, hi = math.log(1e-6), math.log(1e6)
    g = (math.sqrt(5) - 1) / 2
    f = lambda t: log_delta_at(rho, eps, 1 + math.exp(t))
    a, b = hi - g * (hi - lo), lo + g * (hi - lo)
    fa, fb = f(a), f(b)
    for _ in range(400):
        if fa < fb:
            hi, b, fb = b, a, fa
            a = hi - g * (hi - lo)
            fa = f(a)
        else:
            lo, a, fa = a, b, fb
            b = lo + g * (hi - lo)
            fb = f(b)
    return min(1.0, math.exp(min(fa, fb)))


def tight_eps(rho, delta):
    lo, hi = 0.0, rho + 2 * math.sqrt(rho * math.log(1 / delta))
    for _ in range(200):
        mid = (lo + hi) / 2
        if tight_delta(rho, mid) <= delta:
            hi = mid
        else:
            lo = mid
    return hi


def tight_rho(eps, delta):
    lo, hi = 0.0, eps + 1
    for _ in range(200):
        mid = (lo + hi) / 2
        if tight_delta(mid, eps) <= delta:
            lo = mid
        else:
            hi = mid
    return lo


def standard_rho(eps, delta):
    l = math.log(1 / delta)
    return (math.sqrt(l + eps) - math.sqrt(l)) ** 2


def standard_eps(rho, delta):
    return rho + 2 * math.sqrt(rho * math.log(1 / delta))


def drv(eps0, k, delta):
    return eps0 * math.sqrt(2 * k * math.log(1 / delta)) + k * eps0 * math.expm1(eps0)


out = {"eps_delta_to_rho": [], "rho_to_eps": [], "rho_to_delta": [], "advanced": [], "paper": []}
for eps, delta in [(1, 1e-9), (0.1, 1e-9), (0.5, 1e-9), (1, 1e-6), (4, 1e-5), (10, 1e-9), (0.01, 1e-10)]:
    out["eps_delta_to_rho"].append({"eps": eps, "delta": delta,
                                    "tight": tight_rho(eps, delta), "standard": standard_rho(eps, delta)})
for rho, delta in [(0.0118, 1e-9), (1.2e-4, 1e-9), (0.5, 1e-6), (2, 1e-9), (1e-6, 1e-9)]:
    out["rho_to_eps"].append({"rho": rho, "delta": delta,
                              "tight": tight_eps(rho, delta), "standard": standard_eps(rho, delta)})
for rho, eps in [(0.0118, 1), (0.1, 1), (0.5, 3), (1, 1), (2, 10), (1e-4, 0.1)]:
    out["rho_to_delta"].append({"rho": rho, "eps": eps, "delta": tight_delta(rho, eps)})
for eps0, k, delta in [(0.01, 1000, 1e-9), (0.1, 100, 1e-6), (1e-4, 10**6, 1e-9), (0.5, 10, 1e-5)]:
    out["advanced"].append({"eps0": eps0, "k": k, "delta": delta, "eps": drv(eps0, k, delta)})
for eps_t, T, delta in [(1e-3, 1000, 1e-9), (3.6e-7, 11800000000, 1e-9)]:
    out["paper"].append({"eps0": eps_t, "k": T, "delta": delta,
                         "eps": 4 * eps_t * math.sqrt(2 * T * math.log(1 / delta))})
print(json.dumps(out, indent=1))
