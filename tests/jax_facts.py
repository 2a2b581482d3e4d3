"""What the installed JAX does, for tests whose expectation depends on its release."""

import jax


def jax_refuses_unhashable_static_arguments_when_tracing() -> bool:
    """JAX 0.10 on refuses ``static_argnums`` values that cannot be hashed when
    tracing; JAX 0.9 only when calling."""
    try:
        jax.jit(lambda x, n: x, static_argnums=1).trace(1.0, [1])
    except ValueError:
        return True
    return False
