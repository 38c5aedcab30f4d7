import jax
import jax.numpy as jnp


def fock_step(density, overlap, core):
    # one SCF-style update on this device's density block; overlap and core are shared constants
    return core + overlap @ density @ overlap.T


def main():
    n = jax.device_count()
    nao = 8
    density = jnp.sin(jnp.arange(n * nao * nao, dtype=jnp.float32)).reshape(n, nao, nao)
    overlap = jnp.eye(nao) + 0.1 * jnp.cos(jnp.arange(nao * nao, dtype=jnp.float32)).reshape(nao, nao)
    core = -jnp.eye(nao)
    return jax.pmap(fock_step)(density, overlap, core)
