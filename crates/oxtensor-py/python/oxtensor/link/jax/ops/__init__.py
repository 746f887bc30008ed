"""The translators, one module per op family (importing them registers them)."""

from oxtensor.link.jax.ops import check, control, elemwise, extra, linalg, random, reduce, shape, special  # noqa: F401
