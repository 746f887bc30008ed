"""``until``: the condition a scan step returns to stop the loop (a while-loop)."""

__all__ = ["until"]


class until:
    """Returned by a scan step (alone, or with its outputs and updates): the loop stops after
    the step where ``condition`` holds. ``condition`` is a boolean scalar."""

    def __init__(self, condition):
        from oxtensor.tensor.basic import as_tensor_variable

        cond = as_tensor_variable(condition)
        if cond.ndim != 0:
            raise TypeError(f"the until condition must be a scalar, got {cond.ndim} dimensions")
        self.condition = cond
