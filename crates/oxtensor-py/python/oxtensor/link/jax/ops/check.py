"""Run-time checks (``Op::CheckAndRaise``, PyTensor's ``CheckAndRaise``/``Assert``) in JAX.

``jax.jit`` cannot raise on a traced value, so, as PyTensor's JAX backend does, a check whose
conditions depend on the inputs is skipped with a warning naming its message, and the
function returns the value unchecked. Conditions known while tracing (constants) are checked,
and a false one raises the check's exception (PyTensor raises those when it translates).
"""

from __future__ import annotations

import warnings

import numpy as np

from oxtensor.link.jax.dispatch import is_concrete, register


@register("CheckAndRaise")
def _check_and_raise(op, node, doc):
    from oxtensor.raise_op import _exception

    kind, msg = op["exc"], op["msg"]

    def run(x, *conds):
        if all(is_concrete(c) for c in conds):
            if not all(bool(np.asarray(c)) for c in conds):
                raise _exception(kind, msg, f"raised by the JAX translation of CheckAndRaise{{{kind}}}")
        else:
            warnings.warn(
                f"Skipping CheckAndRaise{{{kind}}} (assertion: {msg}) as JAX tracing would remove it.",
                stacklevel=2,
            )
        return (x,)

    return run
