import jax
import jax.numpy as jnp
from flax import nnx


class Scorer(nnx.Module):
    def __init__(self, dim):
        self.w = nnx.Param(jax.random.normal(jax.random.key(0), dim))

    def __call__(self, x):
        x = self.perturb("grad_of_x", x)
        y = jnp.dot(x, self.w)
        self.sow(nnx.Intermediate, "y", y)
        return y


@nnx.capture(nnx.Perturbation)
def init_perturbations(model, x):
    graphdef, intms, params = nnx.split(model, nnx.Intermediate, nnx.Param)

    def forward(intms, params, x):
        return nnx.merge(graphdef, intms, params)(x)

    return nnx.vmap(forward, in_axes=(None, None, 0))(intms, params, x)


@nnx.jit
def train_step(model, x):
    _, perturbations = init_perturbations(model, x)

    def loss_grad(model, perturbations, x):
        def loss(model, perturbations, x):
            return nnx.capture(model, nnx.Intermediate, init=perturbations)(x)

        (grads, perturb_grads), sowed = nnx.grad(loss, argnums=(0, 1), has_aux=True)(model, perturbations, x)
        return grads, nnx.merge_state(perturb_grads, sowed)

    return nnx.vmap(loss_grad, in_axes=(None, 0, 0))(model, perturbations, x)


def main():
    model = Scorer(4)
    x = jnp.arange(12.0).reshape(3, 4) / 10.0  # 3 examples
    grads, intermediates = train_step(model, x)
    return jax.tree.leaves(grads), jax.tree.leaves(intermediates)
