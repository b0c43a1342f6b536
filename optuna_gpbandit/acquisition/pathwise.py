"""A Thompson draw as a function: pathwise conditioning on a random-Fourier-feature prior draw.

Wilson, Borovitskiy, Terenin, Mostowsky & Deisenroth (ICML 2020), "Efficiently sampling functions
from Gaussian process posteriors": a posterior draw is a prior draw corrected by the data,

    h(x) = g(x) + k(x, X) (K + Sigma)^{-1} (y - g(X) - eps),   eps ~ N(0, Sigma),

with ``g`` a prior draw and ``Sigma`` the noise on the diagonal. Here ``g`` is built from ``M``
random Fourier features (Rahimi & Recht 2007), so it is defined everywhere, and the correction is
exact. GP-TS's draw from ``GP(mu, v^2 k_{t-1})`` is then

    f_t(x) = mu(x) + v (g(x) - k(x, X) (K + Sigma)^{-1} (g(X) + eps)),

a smooth function with a gradient: the acquisition maximiser optimises it over the whole space
like any acquisition, where a joint draw exists only on a finite candidate set.

Spectral densities: the squared-exponential kernel's is Gaussian; Matern-5/2's is a multivariate
Student-t with 5 degrees of freedom. A categorical parameter's Hamming term ``[x != x'] / l^2``
is the squared distance of one-hot codes scaled by ``1 / (sqrt(2) l)``, so it gets one frequency
per choice.
"""

from __future__ import annotations

import numpy as np

from optuna_gpbandit._space import EncodedSpace
from optuna_gpbandit.gp.input_warp import warp, warp_slope
from optuna_gpbandit.gp.posterior import GPPosterior

DEFAULT_FEATURES = 1024
_CHUNK = 2048


class SamplePath:
    """One draw ``f_t`` from ``GP(mu, scale^2 k_{t-1})`` on the whole (encoded) space.

    Parameters
    ----------
    posterior
        The GP posterior ``(mu, k_{t-1})``.
    space
        The encoded space (the number of choices of each categorical parameter).
    scale
        ``v``: the draw's deviations from the mean are scaled by it (GP-TS's ``v_t``).
    rng
        Random stream of the draw.
    n_features
        Number of random Fourier features ``M`` of the prior draw; its variance error is
        ``O(1 / sqrt(M))``.
    """

    def __init__(self, posterior: GPPosterior, space: EncodedSpace, scale: float,
                 rng: np.random.Generator, n_features: int = DEFAULT_FEATURES) -> None:
        from scipy.linalg import cho_solve
        if not (np.isfinite(scale) and scale >= 0):
            raise ValueError(f"The draw's scale must be finite and >= 0, got {scale}.")
        params = posterior.params
        ls = np.broadcast_to(params.lengthscales, (space.d,))
        cat = space.is_categorical
        self._num = np.flatnonzero(~cat)
        self._cat = np.flatnonzero(cat)
        # a conditional space's inactive code (-1) is one more category, the last column
        n_choices = [int(space.columns[j].size) + space.conditional for j in self._cat]
        n_embedded = self._num.size + sum(n_choices)  # dimension of the embedding
        M = int(n_features)
        omega = rng.standard_normal((M, n_embedded))
        if params.kernel == "matern52":  # multivariate t, 2 nu = 5 degrees of freedom
            omega *= np.sqrt(5.0 / rng.chisquare(5.0, size=(M, 1)))
        self._W = omega[:, : self._num.size] / ls[self._num]  # (M, numeric dims)
        self._tables = []  # per categorical column: (M, choices) phases of its one-hot code
        at = self._num.size
        for j, n in zip(self._cat, n_choices):
            self._tables.append(omega[:, at : at + n] / (np.sqrt(2.0) * ls[j]))
            at += n
        self._warp = params.warp  # the features see the warped inputs, as the kernel does
        self._b = rng.uniform(0.0, 2.0 * np.pi, M)
        self._amp = np.sqrt(2.0 * params.scale / M)
        self._w = rng.standard_normal(M)
        self._w32 = self._w.astype(np.float32)
        self._posterior = posterior
        self._v = float(scale)
        gX = self._prior_warped(posterior.X_warped)
        eps = rng.standard_normal(posterior.n) * np.sqrt(posterior.noise_diag)
        beta = cho_solve((posterior.L, True), gX + eps, check_finite=False)
        self._weights = posterior.alpha - self._v * beta  # on k(x, X)

    def _phase(self, W: np.ndarray) -> np.ndarray:
        """Phases at inputs ``W`` already warped (the warp leaves categorical columns as
        they are)."""
        P = W[:, self._num] @ self._W.T + self._b
        for j, T in zip(self._cat, self._tables):
            P += T[:, W[:, j].astype(int)].T
        return P

    def prior(self, X: np.ndarray) -> np.ndarray:
        """The unscaled prior draw ``g`` at the rows of ``X``.

        The cosines of a batch are taken in single precision (vectorised and faster; the
        phases are formed in double precision): the draw moves by far less than its Monte
        Carlo error of ``1 / sqrt(M)`` (docs/benchmarks.md, "The path draw's precision"). One
        point (:meth:`value_grad`) stays in double precision.
        """
        return self._prior_warped(warp(np.atleast_2d(np.asarray(X, dtype=float)), self._warp))

    def _prior_warped(self, W: np.ndarray) -> np.ndarray:
        """:meth:`prior` at inputs already warped."""
        P = self._phase(W).astype(np.float32)
        np.cos(P, out=P)
        return self._amp * (P @ self._w32).astype(float)

    def values(self, X: np.ndarray) -> np.ndarray:
        """``f_t`` at the rows of ``X``."""
        X = np.atleast_2d(np.asarray(X, dtype=float))
        out = np.empty(X.shape[0])
        kern = self._posterior.kernel
        for s in range(0, X.shape[0], _CHUNK):
            Ws = kern.warped(X[s : s + _CHUNK])
            out[s : s + _CHUNK] = kern.of_warped(Ws, self._posterior.X_warped) @ self._weights
            out[s : s + _CHUNK] += self._v * self._prior_warped(Ws)
        return out + self._posterior.offset(X)

    def value_grad(self, x: np.ndarray) -> tuple[float, np.ndarray]:
        """``f_t(x)`` and its gradient (zero on categorical columns)."""
        x = np.asarray(x, dtype=float)
        post = self._posterior
        k, J = post.kernel.grad_x(x, post.X, post.X_warped)
        phase = self._phase(warp(x[None, :], self._warp))[0]
        value = (float(k @ self._weights + self._v * self._amp * (np.cos(phase) @ self._w))
                 + post.offset_at(x))
        grad = J.T @ self._weights
        grad[self._num] -= (self._v * self._amp * ((np.sin(phase) * self._w) @ self._W)
                            * warp_slope(x, self._warp)[self._num])
        return value, grad
