"""SSP with a fixed ridge: AdaSSP's two noisy statistics (spec 004 §3.7) without its adaptive λ."""

import numpy as np

from dpbench.linalg import solve_or_lstsq, symmetric_gaussian
from dpbench.mechanisms import FitResult, check_inputs
from dpbench.privacy.agm import sigma_agm
from dpbench.registry import register_mechanism


@register_mechanism(
    "noisy_ridge", summary="SSP with a fixed ridge (plug-in example)", privacy_model="central", neighbour="zero_out"
)
def fit(X, y, epsilon, delta, rng, *, ridge: float = 1.0):
    """θ̂ = (XᵀX + s·N_sym + λI)⁻¹(XᵀY + s·ζ): two releases of sensitivity 1 (‖x_i‖, |y_i| ≤ 1), each (ε/2, δ/2)."""
    X, y = check_inputs(X, y, epsilon, delta, x_bound=1.0, y_bound=1.0)
    d = X.shape[1]
    s = sigma_agm(epsilon / 2, delta / 2, 1.0)
    xtx = X.T @ X + s * symmetric_gaussian(d, rng) + ridge * np.eye(d)
    return FitResult(solve_or_lstsq(xtx, X.T @ y + s * rng.standard_normal(d)), {"sigma": s})
