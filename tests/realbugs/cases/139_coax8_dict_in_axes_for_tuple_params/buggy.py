import jax
import jax.numpy as jnp


def target_value(params, state):
    q_w, pi_w = params
    q_s, pi_s = state
    action = jnp.tanh(pi_w @ pi_s)
    return q_w @ jnp.concatenate([q_s, action])


def main():
    q_w = jnp.arange(10.0).reshape(2, 5) / 10.0
    pi_w = jnp.arange(6.0).reshape(2, 3) / 6.0
    q_s = jnp.arange(6.0).reshape(2, 3) / 3.0
    pi_s = jnp.array([0.5, -0.5, 1.0])
    vq = jax.vmap(target_value, in_axes=({"q_targ": 0, "pi_targ": None}, {"q_targ": 0, "pi_targ": None}))
    return vq((q_w, pi_w), (q_s, pi_s))
