import jax
import jax.numpy as jnp


def loss_fn(params, inputs, targets):
    preds = jnp.tanh(inputs @ params["w"] + params["b"][None, :])
    return jnp.mean((preds - targets) ** 2)


def main():
    param_list = [{"w": jnp.arange(6.0).reshape(3, 2) / (10.0 + k), "b": jnp.arange(2.0) / (3.0 + k)} for k in range(4)]
    params = jax.tree.map(lambda *leaves: jnp.stack(leaves), *param_list)
    inputs = jnp.arange(60.0).reshape(4, 5, 3) / 60.0
    targets = jnp.arange(40.0).reshape(4, 5, 2) / 40.0
    step = jax.vmap(jax.value_and_grad(loss_fn), in_axes=(0, 0, 0))
    return step(params, inputs, targets)
