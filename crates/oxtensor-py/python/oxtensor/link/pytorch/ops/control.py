"""Ops with inner graphs, run eagerly: ``OpFromGraph`` (its body called inline), ``IfElse``
(a Python branch on the condition's value: only the chosen branch runs) and ``Scan`` (a Python
loop over the step's body, stopping early on an ``until`` condition)."""

from __future__ import annotations

import torch

from oxtensor.link.pytorch.dispatch import as_int, out_dtypes, register, tensor, torch_dtype


@register("OpFromGraph")
def _op_from_graph(op, node, doc):
    body = doc.frozen(op["body"])
    return lambda *xs: body(*xs)


@register("IfElse")
def _ifelse(op, node, doc):
    then_fn, else_fn = doc.frozen(op["then"]), doc.frozen(op["else"])
    dtypes = [torch_dtype(d) for d in out_dtypes(node)]

    def run(cond, *xs):
        outs = then_fn(*xs) if bool(tensor(cond)) else else_fn(*xs)
        return tuple(tensor(o).to(d) for o, d in zip(outs, dtypes))

    return run


def _stacked(rows, dtype, row_shape):
    if rows:
        return torch.stack(rows)
    return torch.zeros((0,) + tuple(row_shape), dtype=dtype)


@register("Scan")
def _scan(op, node, doc):
    body = doc.frozen(op["body"])
    seq_taps, state_taps = op["sequence_taps"], op["state_taps"]
    n_seq, n_state, n_mapped = len(seq_taps), len(state_taps), op["n_mapped"]
    backwards, until = op["go_backwards"], op["until"]
    dtypes = [torch_dtype(d) for d in out_dtypes(node)]
    # A loop of no steps gives empty outputs of the step's shapes (unknown extents as 0).
    row_shapes = [[s or 0 for s in t["shape"][1:]] for t in node["types"]]

    def run(n_steps, *rest):
        seqs = [tensor(s) for s in rest[:n_seq]]
        inits = [tensor(s) for s in rest[n_seq:n_seq + n_state]]
        others = rest[n_seq + n_state:]
        n = as_int(n_steps)
        allowed = [s.shape[0] - (t[-1] - t[0]) for s, t in zip(seqs, seq_taps)]
        if n < 0:
            n = max(0, min(allowed))
        elif allowed and n > min(allowed):
            raise ValueError(f"Scan: {n} steps asked, the sequences allow {min(allowed)}")
        # Per sequence tap, the rows the steps read (visited last to first when going backwards).
        windows = []
        for s, taps in zip(seqs, seq_taps):
            for t in taps:
                rows = s[t - taps[0]: t - taps[0] + n]
                windows.append(rows.flip(0) if backwards else rows)
        # Per state, its last `depth` values (the oldest first).
        buffers = [list(init[init.shape[0] + taps[0]:]) for init, taps in zip(inits, state_taps)]
        records = [[] for _ in range(n_state + n_mapped)]
        for step in range(n):
            tap_values = []
            for buf, taps in zip(buffers, state_taps):
                tap_values.extend(buf[len(buf) + t] for t in taps)
            outs = body(*[w[step] for w in windows], *tap_values, *others)
            values = [tensor(o).to(d) for o, d in zip(outs[:n_state + n_mapped], dtypes)]
            for k, v in enumerate(values):
                records[k].append(v)
            for buf, v in zip(buffers, values[:n_state]):
                buf.pop(0)
                buf.append(v)
            if until and bool(tensor(outs[-1])):
                break
        return tuple(_stacked(r, d, s) for r, d, s in zip(records, dtypes, row_shapes))

    return run
