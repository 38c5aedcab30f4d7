import jax
import jax.numpy as jnp
from flax import nnx

PARAM_SCAN_AXIS = 1  # the stacked parameters keep their layer axis second


def create_layer_fn(rngs: nnx.Rngs) -> nnx.Module:
    return nnx.Linear(3, 3, rngs=rngs)


def run_stage(stage, x):
    graphdef, params, rest = nnx.split(stage, nnx.Param, ...)
    params = jax.tree.map(lambda p: jnp.moveaxis(p, PARAM_SCAN_AXIS, 0), params)

    def layer_fn(carry, scanned):
        layer = nnx.merge(graphdef, *scanned)
        return jnp.tanh(layer(carry)), None

    out, _ = jax.lax.scan(layer_fn, x, (params, rest))
    return out


def main():
    stage = nnx.vmap(create_layer_fn, in_axes=0, out_axes=0)(nnx.Rngs(0).split(3))
    return run_stage(stage, jnp.linspace(-1.0, 1.0, 6).reshape(2, 3))
