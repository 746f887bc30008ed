"""The PyTorch engine: ``mode="PYTORCH"`` and ``pytorch_funcify``.

As for JAX (``oxtensor.link.jax``), a graph is rewritten with FAST_RUN's passes minus
``fusion`` and ``scan_last_only``, serialized in the no-code format (``docs/serialization.md``)
and translated from that document (the shared walker, ``oxtensor.link.document``) into one
Python function of eager ``torch`` calls, one module per op family under ``ops/``.
``mode="PYTORCH"`` runs it eagerly; ``mode="PYTORCH_COMPILED"`` hands it to ``torch.compile``
first (which needs a C++ toolchain and compiles at the first call). ``pytorch_funcify`` gives
the function itself, of tensors, for autograd or ``torch.func``.

Every value is a tensor, so every shape and bound is known when an op runs: dynamic reshapes,
``unique``, ``nonzero`` and Scans with ``until`` translate, unlike in JAX. Values keep
NumPy's dtypes (each op casts to the dtypes the document gives); ``uint16``/``uint32``/
``uint64``, which PyTorch cannot compute with, are held as ``int64`` (``dispatch.py``).
"""

from __future__ import annotations

from oxtensor.link.pytorch.function import PyTorchFunction, pytorch_funcify

__all__ = ["pytorch_funcify", "PyTorchFunction"]
