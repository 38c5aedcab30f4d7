import jax
import jax.numpy as jnp


def init(rng, x):
    k1, _ = jax.random.split(rng)
    return {"w": jax.random.normal(k1, (x.shape[-1], 4)), "b": jnp.zeros(4)}


def apply(params, rng, x):
    # a transformed module's apply: (params, rng, inputs); rng may be None
    return jnp.tanh(x @ params["w"] + params["b"])


def main():
    x = jnp.linspace(-1.0, 1.0, 15).reshape(5, 3)  # batch of 5 inputs
    params = init(jax.random.PRNGKey(42), x[0])  # initialised on a single input
    batched_forward = jax.vmap(apply, in_axes=(None, None, 0))
    return batched_forward(params, None, x)
