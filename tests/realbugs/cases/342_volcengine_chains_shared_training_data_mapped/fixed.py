import jax
import jax.numpy as jnp


def init_chain(key):
    k1, k2 = jax.random.split(key)
    return {
        "layer1": {"w": jax.random.normal(k1, (4, 3)), "b": jnp.zeros(3)},
        "layer2": {"w": jax.random.normal(k2, (3, 2)), "b": jnp.zeros(2)},
    }


def step(state, key, x_train):
    # one move of one chain: perturb every parameter, then score the new state on the shared data
    leaves, tree = jax.tree.flatten(state)
    keys = jax.random.split(key, len(leaves))
    new = tree.unflatten([p + 0.01 * jax.random.normal(k, p.shape) for p, k in zip(leaves, keys)])
    h = jnp.tanh(x_train @ new["layer1"]["w"] + new["layer1"]["b"][None, :])
    out = h @ new["layer2"]["w"] + new["layer2"]["b"][None, :]
    return new, jnp.mean(out**2)


def main():
    states = jax.vmap(init_chain)(jax.random.split(jax.random.PRNGKey(42), 3))
    step_keys = jax.random.split(jax.random.PRNGKey(1), 3)
    x_train = jnp.linspace(-1.0, 1.0, 20).reshape(5, 4)
    return jax.vmap(step, in_axes=(0, 0, None))(states, step_keys, x_train)
