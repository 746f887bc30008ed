"""``map``, ``reduce``, ``foldl`` and ``foldr``: the common shapes of ``scan``, with PyTensor's
signatures."""

from oxtensor.scan.basic import scan

__all__ = ["map", "reduce", "foldl", "foldr"]


def map(fn, sequences, non_sequences=None, truncate_gradient=-1, go_backwards=False, mode=None, name=None, return_updates=True):
    """``fn`` applied to each step of ``sequences``: every output is stacked."""
    return scan(
        fn,
        sequences=sequences,
        outputs_info=None,
        non_sequences=non_sequences,
        truncate_gradient=truncate_gradient,
        go_backwards=go_backwards,
        mode=mode,
        name=name,
        return_updates=return_updates,
    )


def _last(outs):
    if isinstance(outs, (list, tuple)):
        return [o[-1] for o in outs]
    return outs[-1]


def reduce(fn, sequences, outputs_info, non_sequences=None, go_backwards=False, mode=None, name=None, return_updates=True):
    """``fn`` folded over ``sequences`` from ``outputs_info``: only each state's last value."""
    result = scan(
        fn,
        sequences=sequences,
        outputs_info=outputs_info,
        non_sequences=non_sequences,
        go_backwards=go_backwards,
        mode=mode,
        name=name,
        return_updates=return_updates,
    )
    if return_updates:
        outs, updates = result
        return _last(outs), updates
    return _last(result)


def foldl(fn, sequences, outputs_info, non_sequences=None, mode=None, name=None, return_updates=True):
    """``reduce`` from the first step to the last."""
    return reduce(fn, sequences, outputs_info, non_sequences, False, mode, name, return_updates)


def foldr(fn, sequences, outputs_info, non_sequences=None, mode=None, name=None, return_updates=True):
    """``reduce`` from the last step to the first."""
    return reduce(fn, sequences, outputs_info, non_sequences, True, mode, name, return_updates)
