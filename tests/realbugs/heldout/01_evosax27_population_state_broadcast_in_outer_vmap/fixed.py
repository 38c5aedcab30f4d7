import jax
import jax.numpy as jnp


def policy(obs, params):
    # one network acting on one observation: (features,) -> (actions,)
    y = obs @ params["w"]
    return jnp.tanh(y + jnp.broadcast_to(params["b"], y.shape))


def main():
    pop, envs, feats, acts = 3, 4, 5, 2
    k1, k2, k3 = jax.random.split(jax.random.PRNGKey(0), 3)
    # one set of weights per population member
    params = {"w": jax.random.normal(k1, (pop, feats, acts)), "b": jax.random.normal(k2, (pop, acts))}
    # one batch of environments per population member: (pop, envs, features)
    state = jax.random.normal(k3, (pop, envs, feats))
    rollout_repeats = jax.vmap(policy, in_axes=(0, None))
    rollout_pop = jax.vmap(rollout_repeats, in_axes=(0, {"w": 0, "b": 0}))
    return rollout_pop(state, params)
