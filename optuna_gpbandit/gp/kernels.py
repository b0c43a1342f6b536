"""Stationary ARD kernels on the encoded search space.

Inputs are rows of an encoded design (see :mod:`optuna_gpbandit._space`): numeric parameters live
in ``[0, 1]`` and categorical parameters hold the index of their choice. Every kernel here is a
function of one scaled squared distance

    r2(x, x') = sum_{numeric i} (x_i - x'_i)^2 / l_i^2  +  sum_{categorical j} [x_j != x'_j] / l_j^2

so a categorical parameter contributes a Hamming term (0 for the same choice, ``1/l_j^2`` for any
two different choices). That keeps one lengthscale per parameter (ARD), ``k(x, x) = scale`` and a
positive definite kernel (a Hamming distance is a squared Euclidean distance of one-hot codes
scaled by 1/2, so it embeds isometrically), without one input dimension per category.

Profiles (unit amplitude, ``r = sqrt(r2)``):

* ``"se"``: ``exp(-r2 / 2)``
* ``"matern52"``: ``(1 + sqrt(5) r + 5 r2 / 3) exp(-sqrt(5) r)``
"""

from __future__ import annotations

import numpy as np

from optuna_gpbandit.gp.input_warp import warp, warp_slope

KERNELS = ("matern52", "se")


def check_kernel_name(name: str) -> str:
    """Return ``name`` if it is a supported kernel, else raise ``ValueError``."""
    if name not in KERNELS:
        raise ValueError(f"Unknown kernel {name!r}; choose one of {KERNELS}.")
    return name


def profile(kind: str, r2: np.ndarray) -> np.ndarray:
    """Unit-amplitude kernel value as a function of the scaled squared distance ``r2``."""
    if kind == "se":
        return np.exp(-0.5 * r2)
    r = np.sqrt(5.0 * r2)
    e = np.exp(-r)
    r2_5_3 = r2 * (5.0 / 3.0)  # r^2 / 3
    r2_5_3 += r
    r2_5_3 += 1.0
    r2_5_3 *= e
    return r2_5_3


def profile_and_grad(kind: str, r2: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """:func:`profile` and its derivative with respect to ``r2`` (finite at ``r2 = 0``), sharing
    the exponential."""
    if kind == "se":
        k = np.exp(-0.5 * r2)
        return k, -0.5 * k
    r = np.sqrt(5.0 * r2)
    e = np.exp(-r)
    return (1.0 + r + r * r / 3.0) * e, -(5.0 / 6.0) * (1.0 + r) * e


def scaled_sq_dist(
    X1: np.ndarray, X2: np.ndarray, lengthscales: np.ndarray, is_categorical: np.ndarray
) -> np.ndarray:
    """Matrix of ``r2(X1[i], X2[j])`` (shape ``(n1, n2)``), clipped at 0."""
    num = ~is_categorical
    if num.any():
        A = X1[:, num] / lengthscales[num]
        B = X2[:, num] / lengthscales[num]
        r2 = A @ B.T
        r2 *= -2.0
        r2 += (A * A).sum(1)[:, None]
        r2 += (B * B).sum(1)[None, :]
        np.maximum(r2, 0.0, out=r2)
    else:
        r2 = np.zeros((X1.shape[0], X2.shape[0]))
    for j in np.flatnonzero(is_categorical):
        r2 += (X1[:, j][:, None] != X2[:, j][None, :]) / lengthscales[j] ** 2
    return r2


def per_dim_sq_diff(X: np.ndarray, is_categorical: np.ndarray) -> np.ndarray:
    """Unscaled per-dimension squared differences, shape ``(n, n, d)`` (Hamming for categoricals).

    Used for hyperparameter gradients, where ``n`` is capped.
    """
    diff = X[:, None, :] - X[None, :, :]
    D = diff * diff
    if is_categorical.any():
        D[:, :, is_categorical] = (diff[:, :, is_categorical] != 0).astype(float)
    return D


class Kernel:
    """A scaled stationary kernel ``scale * profile(r2)`` with ARD lengthscales.

    Parameters
    ----------
    kind
        ``"matern52"`` or ``"se"``.
    lengthscales
        One positive lengthscale per encoded dimension (a scalar is broadcast).
    scale
        Kernel amplitude ``k(x, x)``.
    is_categorical
        Boolean mask of the dimensions that hold categorical indices.
    warp_ab
        Input warping ``(a, b)`` per dimension, shape ``(2, d)`` (see
        :mod:`optuna_gpbandit.gp.input_warp`); ``None``: none.
    """

    def __init__(
        self,
        kind: str,
        lengthscales: np.ndarray | float,
        scale: float,
        is_categorical: np.ndarray,
        warp_ab: np.ndarray | None = None,
    ) -> None:
        self.kind = check_kernel_name(kind)
        self.is_categorical = np.asarray(is_categorical, dtype=bool)
        d = self.is_categorical.shape[0]
        self.lengthscales = np.broadcast_to(np.asarray(lengthscales, dtype=float), (d,)).copy()
        self.scale = float(scale)
        if not (np.all(self.lengthscales > 0) and self.scale > 0):
            raise ValueError("Kernel lengthscales and scale must be positive.")
        self.warp_ab = None if warp_ab is None else np.asarray(warp_ab, dtype=float)

    def __call__(self, X1: np.ndarray, X2: np.ndarray) -> np.ndarray:
        return self.of_warped(self.warped(X1), self.warped(X2))

    def warped(self, X: np.ndarray) -> np.ndarray:
        """``X`` through the input warp (``X`` itself when there is none)."""
        return warp(X, self.warp_ab)

    def of_warped(self, W1: np.ndarray, W2: np.ndarray) -> np.ndarray:
        """The kernel matrix of inputs already warped by :meth:`warped` (a fixed design is
        warped once, not at every evaluation)."""
        r2 = scaled_sq_dist(W1, W2, self.lengthscales, self.is_categorical)
        return self.scale * profile(self.kind, r2)

    def grad_x(self, x: np.ndarray, X: np.ndarray,
               X_warped: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:
        """Kernel vector ``k(X, x)`` (shape ``(n,)``) and its Jacobian in ``x`` (``(n, d)``).

        The Jacobian is zero on categorical dimensions (they are not differentiable).
        ``X_warped``: ``self.warped(X)`` when the caller holds it.
        """
        X = self.warped(X) if X_warped is None else X_warped
        xw = self.warped(x[None, :])[0]
        r2 = scaled_sq_dist(X, xw[None, :], self.lengthscales, self.is_categorical)[:, 0]
        k, dk_dr2 = profile_and_grad(self.kind, r2)
        k, dk_dr2 = self.scale * k, self.scale * dk_dr2
        inv_l2 = np.where(self.is_categorical, 0.0, 1.0 / self.lengthscales**2)
        inv_l2 *= warp_slope(x, self.warp_ab)
        jac = dk_dr2[:, None] * 2.0 * (xw[None, :] - X) * inv_l2[None, :]
        return k, jac
