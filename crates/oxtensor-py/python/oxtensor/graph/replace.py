"""Substituting variables in a graph (``pytensor.graph.replace``)."""

from oxtensor import _core


def clone_replace(output, replace=None, **rebuild_kwds):
    """``output`` (a variable, or a list or tuple of them) rebuilt with the variables in
    ``replace`` (a dict, or a sequence of ``(old, new)`` pairs) replaced by their new ones.

    The original graph is unchanged (graphs are immutable values); the result shares every
    part of it the replacements do not reach. A replacement must have the replaced
    variable's type or a more specific one (the same dtype and rank, static where the
    replaced variable is static), else ``TypeError`` names both. ``rebuild_kwds`` (PyTensor's options for
    its cloning) are accepted and ignored: nothing here is copied that could be shared.
    """
    del rebuild_kwds
    if replace is None:
        pairs = []
    elif isinstance(replace, dict):
        pairs = list(replace.items())
    else:
        pairs = [tuple(p) for p in replace]
    single = not isinstance(output, (list, tuple))
    outputs = [output] if single else list(output)
    result = _core.clone_replace(outputs, pairs)
    if single:
        return result[0]
    return type(output)(result)
