"""The exact law of objective perturbation on a ball (``objective`` release kind; Kifer, Smith & Thakurta 2012,
Gaussian variant; spec 005 §6), so that ``dpbench audit objpert`` computes the exact ε of θ̂ itself.

The release is θ̂ = argmin_{‖θ‖ ≤ R} ½θᵀAθ − (c − b)ᵀθ with b ~ N(0, σ²I_d), A ≻ 0 and c data-dependent (ObjPert:
A = XᵀX + ΛI, c = XᵀY). By the KKT conditions of the ball (normal cone {νθ : ν ≥ 0} on the sphere), θ̂ = θ exactly
when b = c − (A + νI)θ with ν = 0 for ‖θ‖ < R and some ν ≥ 0 for ‖θ‖ = R; the map (θ, ν) ↦ b is a bijection (θ̂ and
ν̂ are unique since the objective is strictly convex). Hence the law of θ̂ has two pieces:

* **interior** (‖θ‖ < R), density w.r.t. d-dimensional Lebesgue measure: b = c − Aθ, so
  p(θ) = φ_σ(c − Aθ)·det A;
* **sphere** (‖θ‖ = R), density w.r.t. the surface measure: parametrise θ = θ(s) by an orthonormal tangent basis
  T (dθ = T ds); then ∂b/∂s = −(A + νI)T, ∂b/∂ν = −θ, and

      p_∂(θ) = ∫₀^∞ φ_σ(c − (A + νI)θ) · |det[(A + νI)T, θ]| dν.

  The Jacobian column of ν is θ itself (norm R), not θ/R: with M = A + νI, det[MT, θ] = det M · det[T, M⁻¹θ] and
  |det[T, v]| = |⟨u, v⟩| for the unit normal u = θ/R, so J(ν) = det M · θᵀM⁻¹θ / R = (1/R) Σ_i h_i² Π_{j≠i}(w_j + ν)
  in the eigenbasis A = V diag(w) Vᵀ, h = Vᵀθ: a polynomial of degree d − 1 with non-negative coefficients.
  With a = c − Aθ, ‖a − νθ‖² = R²(ν − μ)² + ‖a‖² − (aᵀθ)²/R², μ = aᵀθ/R², s = σ/R:

      p_∂(θ) = (2πσ²)^{-d/2} e^{−(‖a‖² − (aᵀθ)²/R²)/(2σ²)} Σ_k q_k s^{k+1} I_k(μ/s),
      I_k(m) = ∫₀^∞ u^k e^{−(u − m)²/2} du,

  closed form for m ≥ 0 by I₀ = √(2π)Φ(m), I₁ = mI₀ + e^{−m²/2}, I_{k+1} = mI_k + kI_{k−1} (positive terms), and
  for m < 0 (where that recurrence cancels) Gauss–Laguerre on the scaled integrand (:func:`log_boundary_integral`).

Both datasets of a pair put mass on both pieces, so the privacy loss at an output is the ratio of the two densities
on the piece the output lies on (the Radon–Nikodym derivative of the two laws): L(θ) = log p_D(θ) − log p_D′(θ).
Its law under D (draw b, solve, evaluate both densities) gives the exact ε by Monte Carlo, as for the ``posterior``
kind. Checked against a Monte-Carlo histogram at d = 1 and 2 (``tests/audit/test_objective_density.py``).
"""

from __future__ import annotations

import functools
import hashlib
import math
from dataclasses import dataclass, field

import numpy as np
from scipy.special import erfcx, log_ndtr

#: an output counts as on the sphere when ‖θ‖ ≥ R(1 − SPHERE_RTOL) (the solver rescales its boundary solutions to R
#: up to round-off; the interior mass within this shell is of order SPHERE_RTOL·d and is neglected)
SPHERE_RTOL = 1e-9
#: Gauss–Laguerre nodes of the sphere's ν-integral for μ < 0
LAGUERRE_NODES = 64
#: Newton iterations of the secular equation in the vectorised sampler (monotone, quadratically convergent)
NEWTON_STEPS = 60
#: Monte-Carlo draws per side of :meth:`ObjectiveLaw.divergence` (fixed seed: the same law gives the same value)
DIVERGENCE_DRAWS = 20_000

#: |m| up to which the scaled moment recurrence is used for m = μ/s < 0 (Gauss–Laguerre beyond)
RECURRENCE_T = 4.0

_LAGUERRE = np.polynomial.laguerre.laggauss(LAGUERRE_NODES)


def _symmetric_coefficients(w: np.ndarray) -> np.ndarray:
    """E (d × d): row i holds the coefficients (ν⁰ … ν^{d−1}) of Π_{j≠i}(ν + w_j)."""
    d = w.size
    out = np.zeros((d, d))
    for i in range(d):
        poly = np.array([1.0])
        for j in range(d):
            if j != i:
                poly = np.convolve(poly, [w[j], 1.0])  # ascending powers: w_j + ν
        out[i, : poly.size] = poly
    return out


def log_truncated_moments(m: np.ndarray, order: int) -> np.ndarray:
    """log I_k(m) = log ∫₀^∞ u^k e^{−(u − m)²/2} du for k = 0 … order − 1, m ≥ 0 (forward recurrence, positive
    terms; shape (len(m), order))."""
    m = np.asarray(m, dtype=float)
    out = np.empty((m.size, order))
    i0 = math.sqrt(2.0 * math.pi) * np.exp(log_ndtr(m))
    prev, cur = i0, m * i0 + np.exp(-0.5 * m * m)
    out[:, 0] = np.log(i0)
    if order > 1:
        out[:, 1] = np.log(cur)
    for k in range(1, order - 1):
        prev, cur = cur, m * cur + k * prev
        out[:, k + 1] = np.log(cur)
    return out


def _log_sum(q: np.ndarray, log_terms: np.ndarray) -> np.ndarray:
    """log Σ_k q_k e^{log_terms_k} per row (q ≥ 0), without overflow."""
    with np.errstate(divide="ignore"):
        terms = np.log(q) + log_terms
    top = np.max(terms, axis=1)
    return top + np.log(np.sum(np.exp(terms - top[:, None]), axis=1))


def _log_scaled_moments_negative(t: np.ndarray, order: int) -> np.ndarray:
    """log Ĩ_k = log ∫₀^∞ u^k e^{−u²/2 − tu} du (t > 0; I_k(−t) = e^{−t²/2} Ĩ_k), k < order: Ĩ₀ = √(π/2)
    erfcx(t/√2), Ĩ₁ = 1 − tĨ₀, Ĩ_{k+1} = kĨ_{k−1} − tĨ_k. The recurrence cancels by about t² per step, so it is used
    for t ≤ :data:`RECURRENCE_T` only (relative error ≲ 10⁻¹¹ there, tested against quadrature)."""
    out = np.empty((t.size, order))
    prev = math.sqrt(math.pi / 2.0) * erfcx(t / math.sqrt(2.0))
    out[:, 0] = np.log(prev)
    cur = 1.0 - t * prev
    for k in range(1, order):
        out[:, k] = np.log(cur)
        prev, cur = cur, k * prev - t * cur
    return out


def _log_laguerre_negative(q: np.ndarray, m: np.ndarray, s: float, chunk: int = 20_000) -> np.ndarray:
    """The μ < 0 integral by Gauss–Laguerre (module docstring of :func:`log_boundary_integral`), in chunks."""
    nodes, weights = _LAGUERRE
    out = np.empty(m.size)
    for lo in range(0, m.size, chunk):
        mm, qn = m[lo : lo + chunk], q[lo : lo + chunk]
        lam = 1.0 - mm
        alpha = 1.0 / lam
        nu = s * nodes[None, :] / lam[:, None]
        poly = np.repeat(qn[:, -1:], nu.shape[1], axis=1)
        for k in range(q.shape[1] - 2, -1, -1):  # Horner in ν
            poly = poly * nu + qn[:, k : k + 1]
        x = alpha[:, None] * nodes[None, :]
        total = np.sum(weights[None, :] * np.exp(x - 0.5 * x * x) * poly, axis=1)
        out[lo : lo + chunk] = np.log(s / lam) - 0.5 * mm**2 + np.log(total)
    return out


def log_boundary_integral(q: np.ndarray, mu: np.ndarray, s: float) -> np.ndarray:
    """log ∫₀^∞ e^{−(ν − μ)²/(2s²)} Σ_k q_k ν^k dν per row (q: N × d non-negative coefficients, μ: N), which is
    log Σ_k q_k s^{k+1} I_k(μ/s).

    m = μ/s ≥ 0: the forward recurrence of I_k (positive terms). −:data:`RECURRENCE_T` ≤ m < 0: the scaled
    recurrence of :func:`_log_scaled_moments_negative`. m < −RECURRENCE_T (rare): with λ = 1 + |m|, α = 1/λ and
    ν = s v/λ the integral is (s/λ) e^{−m²/2} ∫₀^∞ e^{−v} e^{αv − α²v²/2} J(sv/λ) dv, whose smooth factor
    Gauss–Laguerre integrates."""
    q = np.atleast_2d(q)
    m = np.asarray(mu, dtype=float) / s
    order = q.shape[1]
    log_s = np.log(s) * np.arange(1, order + 1)
    out = np.empty(m.size)
    pos = m >= 0
    if np.any(pos):
        out[pos] = _log_sum(q[pos], log_truncated_moments(m[pos], order) + log_s)
    mid = (m < 0) & (m >= -RECURRENCE_T)
    if np.any(mid):
        out[mid] = _log_sum(q[mid], _log_scaled_moments_negative(-m[mid], order) + log_s) - 0.5 * m[mid] ** 2
    far = m < -RECURRENCE_T
    if np.any(far):
        out[far] = _log_laguerre_negative(q[far], m[far], s)
    return out


@dataclass(frozen=True)
class BallObjective:
    """θ̂ = argmin_{‖θ‖ ≤ R} ½θᵀAθ − (c − b)ᵀθ, b ~ N(0, σ²I): its sampler and its two-piece density (module
    docstring)."""

    a: np.ndarray
    c: np.ndarray
    sigma: float
    radius: float
    w: np.ndarray = field(init=False, repr=False)
    v: np.ndarray = field(init=False, repr=False)
    coeffs: np.ndarray = field(init=False, repr=False)

    def __post_init__(self) -> None:
        a = np.asarray(self.a, dtype=float)
        w, v = np.linalg.eigh((a + a.T) / 2.0)
        if not (np.all(np.isfinite(w)) and w[0] > 0 and self.sigma > 0 and self.radius > 0):
            raise ValueError("objective release: need A ≻ 0, σ > 0 and R > 0")
        object.__setattr__(self, "w", w)
        object.__setattr__(self, "v", v)
        object.__setattr__(self, "coeffs", _symmetric_coefficients(w))

    @property
    def d(self) -> int:
        return self.w.size

    def solve(self, g: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """(θ, on_sphere) of argmin_{‖θ‖ ≤ R} ½θᵀAθ − gᵀθ per row of g: interior θ = A⁻¹g when ‖A⁻¹g‖ ≤ R, else
        θ(ν) = (A + νI)⁻¹g with ψ(ν) = 1/‖θ(ν)‖ − 1/R = 0 by Newton from ν = 0 (ψ concave increasing: monotone)."""
        k = np.atleast_2d(g) @ self.v
        w = self.w
        norm0 = np.sqrt(np.sum((k / w) ** 2, axis=1))
        sphere = norm0 > self.radius
        nu = np.zeros(k.shape[0])
        ks = k[sphere]
        n = np.zeros(ks.shape[0])
        for _ in range(NEWTON_STEPS):
            den = w[None, :] + n[:, None]
            pn = np.sqrt(np.sum((ks / den) ** 2, axis=1))
            slope = np.sum(ks**2 / den**3, axis=1)
            gap = pn / self.radius - 1.0
            if not gap.size or np.max(np.abs(gap)) <= 1e-14:
                break
            n = n + pn**2 * gap / slope
        nu[sphere] = n
        theta = (k / (w[None, :] + nu[:, None])) @ self.v.T
        norms = np.linalg.norm(theta[sphere], axis=1)
        theta[sphere] *= (self.radius / norms)[:, None]
        return theta, sphere

    def sample(self, size: int, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
        """``size`` draws of θ̂ (and whether each lies on the sphere)."""
        b = self.sigma * rng.standard_normal((size, self.d))
        return self.solve(np.asarray(self.c, dtype=float)[None, :] - b)

    def on_sphere(self, theta: np.ndarray) -> np.ndarray:
        return np.linalg.norm(np.atleast_2d(theta), axis=1) >= self.radius * (1.0 - SPHERE_RTOL)

    def log_density(self, theta: np.ndarray, sphere: np.ndarray | None = None) -> np.ndarray:
        """log p(θ) on the interior (Lebesgue) and log p_∂(θ) on the sphere (surface measure), per row; −∞ outside
        the ball."""
        theta = np.atleast_2d(np.asarray(theta, dtype=float))
        sphere = self.on_sphere(theta) if sphere is None else np.asarray(sphere, dtype=bool)
        sigma2, d = self.sigma**2, self.d
        resid = np.asarray(self.c, dtype=float)[None, :] - theta @ np.asarray(self.a, dtype=float).T  # a = c − Aθ
        base = -0.5 * d * math.log(2.0 * math.pi * sigma2)
        out = base - 0.5 * np.sum(resid**2, axis=1) / sigma2 + float(np.sum(np.log(self.w)))
        if np.any(sphere):
            th, a = theta[sphere], resid[sphere]
            r2 = self.radius**2
            along = np.sum(a * th, axis=1)
            perp2 = np.maximum(np.sum(a * a, axis=1) - along**2 / r2, 0.0)
            q = ((th @ self.v) ** 2 @ self.coeffs) / self.radius
            integral = log_boundary_integral(q, along / r2, self.sigma / self.radius)
            out[sphere] = base - 0.5 * perp2 / sigma2 + integral
        outside = np.linalg.norm(theta, axis=1) > self.radius * (1.0 + SPHERE_RTOL)
        out[outside] = -np.inf
        return out

    def unit_noise(self, theta: np.ndarray, rng: np.random.Generator, grid: int = 4_001) -> np.ndarray:
        """A draw of b/σ given the output θ (one row): b = c − Aθ inside; on the sphere b = c − (A + ν̃I)θ with ν̃
        drawn from ν's conditional law given θ, ∝ e^{−(ν − μ)²/(2s²)} J(ν) on ν ≥ 0 (inverse CDF on a grid). Then
        (θ, ν̃) has the joint law of (θ̂, ν̂), so the result is exactly N(0, I_d) when θ follows the declared law —
        the residual the noise, centre and correlation checks test (on the sphere b is not a function of θ̂)."""
        theta = np.ravel(np.asarray(theta, dtype=float))
        resid = np.asarray(self.c, dtype=float) - np.asarray(self.a, dtype=float) @ theta
        if not self.on_sphere(theta[None, :])[0]:
            return resid / self.sigma
        r2, s = self.radius**2, self.sigma / self.radius
        mu = float(resid @ theta) / r2
        width = s if mu >= 0 else min(s, (self.d + 40.0) * s * s / abs(mu))
        nu = np.linspace(0.0, max(mu, 0.0) + 12.0 * width, grid)
        q = ((theta @ self.v) ** 2 @ self.coeffs) / self.radius
        log_f = -0.5 * ((nu - mu) / s) ** 2 + np.log(np.polynomial.polynomial.polyval(nu, q) + 1e-300)
        f = np.exp(log_f - np.max(log_f))
        cdf = np.concatenate([[0.0], np.cumsum((f[1:] + f[:-1]) / 2.0)])
        nu_draw = float(np.interp(rng.uniform() * cdf[-1], cdf, nu))
        return (resid - nu_draw * theta) / self.sigma


@dataclass(frozen=True)
class ObjectiveLaw:
    """An ``objective`` release seen from both datasets: the laws of θ̂ under D and D′ and its privacy loss."""

    law_d: BallObjective
    law_dp: BallObjective

    def llr(self, theta: np.ndarray) -> np.ndarray | float:
        """L(θ) = log p_D(θ) − log p_D′(θ) on the piece θ lies on (a float for one output)."""
        theta = np.asarray(theta, dtype=float)
        sphere = self.law_d.on_sphere(theta)
        out = self.law_d.log_density(theta, sphere) - self.law_dp.log_density(theta, sphere)
        return float(out[0]) if theta.ndim == 1 else out

    def draws(self, side: str, size: int, rng: np.random.Generator) -> np.ndarray:
        """``size`` exact draws of L with θ̂ from the law of ``side`` ("D" or "D'")."""
        theta, sphere = (self.law_d if side == "D" else self.law_dp).sample(size, rng)
        return self.law_d.log_density(theta, sphere) - self.law_dp.log_density(theta, sphere)

    def divergence(self) -> float:
        """2·KL estimate E_D[L] − E_D′[L] (fixed seed, :data:`DIVERGENCE_DRAWS` per side): ranks pairs, and is the
        same number for the same law (so a fixed history is recognised)."""
        return _divergence(_key(self.law_d), _key(self.law_dp))


def _key(law: BallObjective) -> tuple:
    return (np.asarray(law.a, dtype=float).tobytes(), np.asarray(law.c, dtype=float).tobytes(), law.d,
            float(law.sigma), float(law.radius))  # fmt: skip


@functools.lru_cache(maxsize=256)
def _divergence(key_d: tuple, key_dp: tuple) -> float:
    def law(key: tuple) -> BallObjective:
        a, c, d, sigma, radius = key
        return BallObjective(np.frombuffer(a).reshape(d, d), np.frombuffer(c), sigma, radius)

    pair = ObjectiveLaw(law(key_d), law(key_dp))
    rng = np.random.default_rng(0x0B1)
    return max(
        0.0, float(np.mean(pair.draws("D", DIVERGENCE_DRAWS, rng)) - np.mean(pair.draws("D'", DIVERGENCE_DRAWS, rng)))
    )


def objective_law(a_d: np.ndarray, c_d: np.ndarray, a_dp: np.ndarray, c_dp: np.ndarray, sigma_d: float,
                  sigma_dp: float, radius: float) -> ObjectiveLaw:  # fmt: skip
    """The pair of laws of an ``objective`` release (each side's own A, c and σ)."""
    return ObjectiveLaw(
        BallObjective(a_d, np.ravel(c_d), sigma_d, radius), BallObjective(a_dp, np.ravel(c_dp), sigma_dp, radius)
    )


def objective_unit_noise(a: np.ndarray, c: np.ndarray, sigma: float, radius: float, theta: np.ndarray) -> np.ndarray:
    """:meth:`BallObjective.unit_noise` of an observed release, with a generator seeded by θ̂'s bytes (the same
    output gives the same residual in every check)."""
    theta = np.ravel(np.asarray(theta, dtype=float))
    seed = int.from_bytes(hashlib.sha256(theta.tobytes()).digest()[:8], "little")
    return BallObjective(a, np.ravel(c), sigma, radius).unit_noise(theta, np.random.default_rng(seed))


def gradient_shift(a_d: np.ndarray, c_d: np.ndarray, a_dp: np.ndarray, c_dp: np.ndarray, theta: np.ndarray) -> float:
    """‖(c_D − c_D′) − (A_D − A_D′)θ̂‖: the difference of the two noises b that map to the observed θ̂ — for one
    differing record (x, y), x(y − xᵀθ̂)·curvature, the gradient of its loss that the KST argument bounds by L."""
    diff = np.ravel(c_d) - np.ravel(c_dp) - (np.asarray(a_d, dtype=float) - np.asarray(a_dp, dtype=float)) @ theta
    return float(np.linalg.norm(diff))
