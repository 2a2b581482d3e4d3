"""Doctests across the project start from the spec's imports."""
import numpy as np
import pytest


@pytest.fixture(autouse=True)
def _doctest_imports(doctest_namespace):
    import olympus
    import olympus.numpy as jnp
    doctest_namespace.update(olympus=olympus, jnp=jnp, np=np)
