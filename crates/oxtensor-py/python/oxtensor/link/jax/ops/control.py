"""Ops with inner graphs: ``OpFromGraph`` (its body called), ``IfElse`` (``lax.cond``, or the
branch itself when the condition is known while tracing) and ``Scan`` (``lax.scan``)."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np

from oxtensor.link.jax.dispatch import is_concrete, out_dtypes, register, static_int


@register("OpFromGraph")
def _op_from_graph(op, node, doc):
    body = doc.frozen(op["body"])
    return lambda *xs: body(*xs)


@register("IfElse")
def _ifelse(op, node, doc):
    then_fn, else_fn = doc.frozen(op["then"]), doc.frozen(op["else"])
    dtypes = out_dtypes(node)

    def cast(outs):
        return tuple(jnp.asarray(o).astype(d) for o, d in zip(outs, dtypes))

    def run(cond, *xs):
        if is_concrete(cond):
            return cast(then_fn(*xs) if bool(np.asarray(cond)) else else_fn(*xs))
        return jax.lax.cond(
            jnp.asarray(cond).astype(bool),
            lambda args: cast(then_fn(*args)),
            lambda args: cast(else_fn(*args)),
            xs,
        )

    return run


@register("Scan")
def _scan(op, node, doc):
    if op["until"]:
        raise NotImplementedError("no JAX translation for op Scan with an `until` condition")
    body = doc.frozen(op["body"])
    seq_taps, state_taps = op["sequence_taps"], op["state_taps"]
    n_seq, n_state, n_mapped = len(seq_taps), len(state_taps), op["n_mapped"]
    backwards = op["go_backwards"]
    dtypes = out_dtypes(node)

    def run(n_steps, *rest):
        seqs = [jnp.asarray(s) for s in rest[:n_seq]]
        inits = [jnp.asarray(s) for s in rest[n_seq:n_seq + n_state]]
        others = rest[n_seq + n_state:]
        n = static_int(n_steps, "number of steps", op)
        allowed = [s.shape[0] - (t[-1] - t[0]) for s, t in zip(seqs, seq_taps)]
        if n < 0:
            n = max(0, min(allowed))
        elif allowed and n > min(allowed):
            raise ValueError(f"Scan: {n} steps asked, the sequences allow {min(allowed)}")
        # Per sequence tap, the rows each step reads (windows visited last to first when going
        # backwards, each keeping its taps' direction).
        windows = []
        for s, taps in zip(seqs, seq_taps):
            for t in taps:
                rows = s[t - taps[0]: t - taps[0] + n]
                windows.append(rows[::-1] if backwards else rows)
        carries = tuple(init[init.shape[0] - (-taps[0]):] for init, taps in zip(inits, state_taps))

        def step(carry, xs):
            tap_values = []
            for c, taps in zip(carry, state_taps):
                depth = -taps[0]
                tap_values.extend(c[depth + t] for t in taps)
            outs = body(*xs, *tap_values, *others)
            nexts = tuple(jnp.asarray(o).astype(d) for o, d in zip(outs[:n_state], dtypes))
            new_carry = tuple(jnp.concatenate([c[1:], nx[None]], axis=0) for c, nx in zip(carry, nexts))
            mapped = tuple(jnp.asarray(o).astype(d) for o, d in zip(outs[n_state:n_state + n_mapped], dtypes[n_state:]))
            return new_carry, nexts + mapped

        _, stacked = jax.lax.scan(step, carries, tuple(windows), length=n)
        return tuple(stacked)

    return run
