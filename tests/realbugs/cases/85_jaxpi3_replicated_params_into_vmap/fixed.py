import jax
import jax.numpy as jnp


def u_net(params, t, x, y):
    feats = jnp.stack([t, x, y])
    hidden = jnp.tanh(jnp.einsum("i,ij->j", feats, params["kernel"]))
    return hidden @ params["head"]


def sgd_step(params):
    return jax.tree.map(lambda p: 0.9 * p, params)


def main():
    params = {"kernel": jnp.arange(12.0).reshape(3, 4) / 10.0, "head": jnp.arange(4.0) / 4.0}
    replicated = jax.tree.map(lambda p: p[None], params)
    state = jax.pmap(sgd_step)(replicated)
    state = jax.tree.map(lambda p: p[0], state)

    t = jnp.arange(3.0) / 3.0
    xs = jnp.arange(5.0) / 5.0
    ys = jnp.arange(5.0) / 7.0
    u_pred_fn = jax.vmap(jax.vmap(u_net, (None, None, 0, 0)), (None, 0, None, None))
    return u_pred_fn(state, t, xs, ys)
