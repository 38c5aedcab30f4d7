import equinox as eqx
import jax
import jax.numpy as jnp


def map_and_loss(model, x, y, aux_data):
    # aux_data: the running mean of the model's 8 output features, shared by every device
    out = jax.vmap(model)(x)
    loss = jnp.mean((out - jnp.broadcast_to(aux_data, out.shape) - y) ** 2)
    new_mean = jax.lax.pmean(jnp.mean(out, axis=0), axis_name="pmap_batch")
    return loss, 0.9 * aux_data + 0.1 * new_mean


def main():
    model = eqx.nn.Linear(4, 8, key=jax.random.PRNGKey(0))
    x = jnp.linspace(-1.0, 1.0, 8 * 2 * 4).reshape(8, 2, 4)  # (devices, per-device batch, features)
    y = jnp.sin(jnp.arange(8 * 2 * 8.0)).reshape(8, 2, 8)
    aux_data = jnp.linspace(0.0, 0.7, 8)
    loss_grad = eqx.filter_value_and_grad(map_and_loss, has_aux=True)
    compute_loss_pmap = eqx.filter_pmap(
        loss_grad, axis_name="pmap_batch", in_axes=(None, 0, 0, 0), out_axes=((0, None), 0)
    )
    (loss, aux_data), grads = compute_loss_pmap(model, x, y, aux_data)
    return jnp.mean(loss, axis=0), aux_data, jnp.mean(grads.weight, axis=0)
