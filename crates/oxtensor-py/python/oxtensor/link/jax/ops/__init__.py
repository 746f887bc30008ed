"""The translators, one module per op family (importing them registers them)."""

from oxtensor.link.jax.ops import control, elemwise, linalg, random, reduce, shape  # noqa: F401
