import jax
import jax.numpy as jnp


def predict_step(inputs, params, cache, eos_id, max_decode_len):
    # greedy decoding of a toy model: max_decode_len sets the output length and
    # eos_id the token that ends a sequence, so both must be Python ints
    def step(tokens_and_state, _):
        tokens, state = tokens_and_state
        state = jnp.tanh(state @ params + cache)
        token = jnp.argmax(state, axis=-1)
        token = jnp.where(tokens[-1] == eos_id, eos_id, token)
        return (tokens, state), token

    _, out = jax.lax.scan(step, (inputs, jnp.sin(inputs.sum() + jnp.arange(4.0))), None, length=max_decode_len)
    return out


def main():
    n = jax.local_device_count()
    inputs = jnp.arange(n * 3, dtype=jnp.int32).reshape(n, 3) % 4
    params = jnp.stack([jnp.linspace(-1.0, 1.0, 16).reshape(4, 4)] * n)
    cache = jnp.stack([jnp.linspace(0.0, 0.3, 4)] * n)
    p_pred_step = jax.pmap(predict_step, axis_name="batch")
    return p_pred_step(inputs, params, cache, 1, 6)
