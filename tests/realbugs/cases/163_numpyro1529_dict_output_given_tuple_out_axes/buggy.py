import jax
import jax.numpy as jnp
from jax.scipy.linalg import solve_triangular


def make_mvn(loc, cov):
    scale_tril = jnp.linalg.cholesky(cov)
    return {"scale_tril": scale_tril, "loc": loc}


def main():
    locs = jnp.arange(12.0).reshape(4, 3) / 4.0
    cov = jnp.array([[2.0, 0.5, 0.0], [0.5, 1.0, 0.2], [0.0, 0.2, 1.5]])
    dists = jax.vmap(make_mvn, in_axes=(0, None), out_axes=(None, 0))(locs, cov)
    x = jnp.array([0.5, 1.0, -0.5])
    z = solve_triangular(dists["scale_tril"], (x[None, :] - dists["loc"]).T, lower=True)
    return dists, jnp.sum(z**2, axis=0)
