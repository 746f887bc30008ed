"""``oxtensor.tensor.random`` — PyTensor's ``pytensor.tensor.random`` (``pt.random``).

Random variables draw from a generator variable (``pytensor.shared(np.random.default_rng(42))``
or ``shared_rng(seed=42)``) and give the same numbers as NumPy's ``Generator`` for the same
state. ``return_next_rng=True`` returns ``(next_rng, draw)``; store ``next_rng`` in the shared
generator with ``updates`` (or its ``default_update``) to advance it on each call.

``mode="JAX"`` draws with ``jax.random`` instead (``oxtensor.link.jax.ops.random``): the same
distributions, shapes and dtypes, different numbers; the shared generator is advanced to a
state derived from the JAX key, so it keeps working in every mode.
"""

from oxtensor.tensor.random.basic import *  # noqa: F401,F403
from oxtensor.tensor.random.basic import __all__ as _basic_all
from oxtensor.tensor.random.utils import RandomStream
from oxtensor.tensor.random.variable import RandomGeneratorSharedVariable, rng, shared_rng

__all__ = list(_basic_all) + ["RandomStream", "RandomGeneratorSharedVariable", "rng", "shared_rng"]
