"""``scan``: PyTensor's loop, built as one ``Scan`` node whose step is a frozen graph.

``fn`` is called once, on variables standing for one step: the sequences' taps, the states'
taps (in the order of ``outputs_info``), then the non-sequences. What it returns (outputs, an
updates dictionary, an ``until`` condition, in any order) becomes the step graph. The loop
runs in the compiled function: as Rust code calling the step's compiled graph, in every
backend.
"""

from oxtensor import _core
from oxtensor.scan.utils import until

__all__ = ["scan"]


def _as_list(x):
    if x is None:
        return []
    if isinstance(x, (list, tuple)):
        return list(x)
    return [x]


def _tensor(x):
    from oxtensor.tensor.basic import as_tensor_variable

    return as_tensor_variable(x)


def _stand_in(name, dtype, shape):
    from oxtensor import tensor as pt

    return pt.tensor(name, dtype=dtype, shape=tuple(shape))


def _taps(taps, what):
    taps = [int(t) for t in _as_list(taps)]
    if not taps or len(set(taps)) != len(taps):
        raise ValueError(f"scan: the taps of {what} must be distinct and not empty, got {taps}")
    return taps


def _split_result(result):
    """``fn``'s outputs, updates and ``until`` condition, from whatever it returned."""
    items = list(result) if isinstance(result, tuple) else [result]
    updates, cond, rest = {}, None, []
    for item in items:
        if isinstance(item, until):
            cond = item.condition
        elif isinstance(item, dict):
            updates.update(item)
        elif item is not None:
            rest.append(item)
    if len(rest) == 1 and isinstance(rest[0], (list, tuple)):
        rest = list(rest[0])
    return rest, updates, cond


def _with_default_updates(outs, updates, cond):
    """``fn``'s updates plus the ``default_update`` of every shared variable the step reads
    without an explicit update (a ``RandomStream`` generator drawn from inside ``fn``), as
    PyTensor's scan collects them: each becomes a loop state, so every step draws from the
    generator the previous step left, and the final generator is among the returned updates."""
    updates = dict(updates)
    roots = list(outs) + list(updates.values()) + ([cond] if cond is not None else [])
    while True:
        new = [(k, v) for k, v in _core.default_updates(roots) if k not in updates]
        if not new:
            return updates
        for k, v in new:
            updates[k] = v
            roots.append(v)


def scan(
    fn,
    sequences=None,
    outputs_info=None,
    non_sequences=None,
    n_steps=None,
    truncate_gradient=-1,
    go_backwards=False,
    mode=None,
    name=None,
    profile=False,
    allow_gc=None,
    strict=False,
    return_list=False,
    return_updates=True,
):
    """Repeats ``fn`` over the steps of ``sequences`` (and/or ``n_steps`` times), feeding each
    state's earlier values back, as ``pytensor.scan``. Returns ``(outputs, updates)`` (only the
    outputs with ``return_updates=False``): each output stacked over the steps, and the final
    values of the shared variables ``fn`` updated."""
    if truncate_gradient != -1 and (isinstance(truncate_gradient, bool) or not isinstance(truncate_gradient, int) or truncate_gradient < 1):
        raise ValueError(f"scan: truncate_gradient must be -1 (all steps) or a positive number of steps; got {truncate_gradient!r}")
    # Sequences: (variable, taps); each tap is one argument of fn.
    seqs = []
    for i, s in enumerate(_as_list(sequences)):
        if isinstance(s, dict):
            var, taps = _tensor(s["input"]), _taps(s.get("taps", [0]), f"sequence {i}")
        else:
            var, taps = _tensor(s), [0]
        if var.ndim == 0:
            raise ValueError(f"scan: sequence {i} is a scalar; a sequence needs a leading axis to loop over")
        seqs.append((var, taps))
    # States: (index among fn's outputs, initial buffer, taps, step dtype/shape).
    infos = _as_list(outputs_info) if outputs_info is not None else None
    states = {}
    for i, info in enumerate(infos or []):
        if isinstance(info, dict):
            if info.get("initial") is None:
                continue
            init, taps = _tensor(info["initial"]), _taps(info.get("taps", [-1]), f"output {i}")
        elif info is None:
            continue
        else:
            init, taps = _tensor(info), [-1]
        if any(t >= 0 for t in taps):
            raise ValueError(f"scan: the taps of output {i} must be negative (earlier steps), got {taps}")
        if taps == [-1]:
            from oxtensor import tensor as pt

            buffer, step_dtype, step_shape = pt.expand_dims(init, 0), init.dtype, init._static_shape
        else:
            if init.ndim == 0:
                raise ValueError(f"scan: output {i} has taps {taps}: its initial value needs a leading axis of {-min(taps)} entries")
            buffer, step_dtype, step_shape = init, init.dtype, init._static_shape[1:]
        states[i] = (buffer, taps, step_dtype, step_shape)
    non_seqs = [_tensor(v) for v in _as_list(non_sequences)]
    # The step's arguments, in PyTensor's order; the op wants each sequence's and state's
    # taps sorted.
    args, tap_inputs = [], []
    for k, (var, taps) in enumerate(seqs):
        inner = {t: _stand_in(f"{var.name or 'seq'}[t{t:+d}]", var.dtype, var._static_shape[1:]) for t in sorted(taps)}
        args.extend(inner[t] for t in taps)
        tap_inputs.extend(inner[t] for t in sorted(taps))
    for i in sorted(states):
        buffer, taps, dtype, shape = states[i]
        inner = {t: _stand_in(f"out{i}[t{t:+d}]", dtype, shape) for t in sorted(taps)}
        args.extend(inner[t] for t in taps)
        tap_inputs.extend(inner[t] for t in sorted(taps))
    # Non-sequences are passed as they are (so fn may differentiate through them, as in
    # PyTensor's jacobian-by-scan example); the step reads them as inputs.
    args.extend(non_seqs)
    outs, updates, cond = _split_result(fn(*args))
    outs = [_tensor(o) for o in outs]
    updates = _with_default_updates(outs, updates, cond)
    if infos is None:
        infos = [None] * len(outs)
    if len(outs) != len(infos):
        raise ValueError(f"scan: fn returned {len(outs)} outputs but outputs_info has {len(infos)} entries")
    for i, (buffer, taps, dtype, shape) in states.items():
        o = outs[i]
        if o.dtype != dtype or o.ndim != len(shape):
            raise TypeError(
                f"scan: fn's output {i} is {o.dtype} with {o.ndim} dimensions, but its initial value "
                f"(outputs_info[{i}]) is {dtype} with {len(shape)}; they must agree (cast one of them)"
            )
    state_order = sorted(states)
    mapped_order = [i for i in range(len(outs)) if i not in states]
    steps = -1 if n_steps is None else n_steps
    nodes = _core.scan(
        tap_inputs,
        [sorted(t) for _, t in seqs],
        [sorted(states[i][1]) for i in state_order],
        non_seqs,
        [outs[i] for i in state_order + mapped_order],
        len(mapped_order),
        cond,
        _tensor(steps),
        [v for v, _ in seqs],
        [states[i][0] for i in state_order],
        non_seqs,
        bool(go_backwards),
        name,
        [(_tensor(k), _tensor(v)) for k, v in updates.items()],
        None if truncate_gradient == -1 else truncate_gradient,
    )
    n_states = len(state_order)
    result = [None] * len(outs)
    for slot, i in enumerate(state_order):
        result[i] = nodes[slot]
    for slot, i in enumerate(mapped_order):
        result[i] = nodes[n_states + len(updates) + slot]
    new_values = {k: nodes[n_states + j][-1] for j, k in enumerate(updates)}
    if return_list:
        value = result
    elif len(result) == 1:
        value = result[0]
    else:
        value = result
    if return_updates:
        return value, new_values
    if new_values:
        raise ValueError(
            "scan: fn updates shared variables; call scan with return_updates=True and pass the "
            "updates to function"
        )
    return value
