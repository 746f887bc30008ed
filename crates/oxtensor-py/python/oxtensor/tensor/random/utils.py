"""``RandomStream``: a factory of random variables, each drawing from its own shared generator
(seeded from one ``SeedSequence``, as PyTensor) whose ``default_update`` advances it on every
call of a function that uses it."""

from __future__ import annotations

import numpy as np

from oxtensor.tensor.random import basic
from oxtensor.tensor.random.variable import shared_rng

__all__ = ["RandomStream"]


class RandomStream:
    """PyTensor's ``RandomStream``: ``srng = RandomStream(seed=42); x = srng.normal(0, 1)``."""

    def __init__(self, seed=None, namespace=None, rng_ctor=np.random.default_rng):
        self.default_instance_seed = seed
        self.gen_seedgen = np.random.SeedSequence(seed)
        self.rng_ctor = rng_ctor
        self.namespace = namespace
        self.state_updates = []

    def updates(self):
        """The ``(shared generator, next generator)`` pairs of the variables drawn so far."""
        return list(self.state_updates)

    def seed(self, seed=None):
        """Reseeds every generator of the stream (and the ones it will create)."""
        if seed is None:
            seed = self.default_instance_seed
        self.gen_seedgen = np.random.SeedSequence(seed)
        for (old_r, _), child in zip(
            self.state_updates, self.gen_seedgen.spawn(len(self.state_updates)), strict=True
        ):
            old_r.set_value(self.rng_ctor(child), borrow=True)

    def gen(self, op, *args, **kwargs):
        """Draws from ``op`` (a distribution function) with a new shared generator."""
        if "rng" in kwargs:
            raise ValueError("The `rng` option cannot be used with a variate in a `RandomStream`")
        (seed,) = self.gen_seedgen.spawn(1)
        rng = shared_rng(self.rng_ctor(seed))
        kwargs.pop("return_next_rng", None)
        new_rng, out = op(*args, rng=rng, return_next_rng=True, **kwargs)
        self.state_updates.append((rng, new_rng))
        rng.default_update = new_rng
        return out

    def __getattr__(self, name):
        if name.startswith("_") or name not in basic.__all__:
            raise AttributeError(f"No attribute {name}.")
        op = getattr(basic, name)

        def draw(*args, **kwargs):
            return self.gen(op, *args, **kwargs)

        return draw
