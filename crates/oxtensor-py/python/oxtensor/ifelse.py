"""``ifelse``: a lazy branch (PyTensor's ``pytensor.ifelse``)."""

from oxtensor import _core
from oxtensor.tensor.basic import as_tensor_variable

__all__ = ["ifelse"]


def ifelse(condition, then_branch, else_branch, name=None):
    """``then_branch`` when the scalar ``condition`` is true, else ``else_branch``: single
    variables or lists of them, pairwise of one dtype and rank. Only the branch taken is
    computed; an output's static extent survives where both branches agree on it."""
    single = not isinstance(then_branch, (list, tuple))
    thens = [then_branch] if single else list(then_branch)
    elses = [else_branch] if not isinstance(else_branch, (list, tuple)) else list(else_branch)
    if len(thens) != len(elses):
        raise ValueError(f"ifelse: {len(thens)} then outputs but {len(elses)} else outputs")
    outs = _core.ifelse(as_tensor_variable(condition), thens, elses)
    return outs[0] if single else outs
