"""``pt.einsum`` lowered to matrix products: a contraction order chosen when the graph is
built (opt_einsum's ``greedy`` strategy, from the operands' static shapes), and each pairwise
contraction as one transpose and reshape per operand, one (batched) ``matmul``, and one
reshape back. Indices used by one operand only are summed before any product, and a repeated
index within one operand takes that operand's diagonal. Gradients follow from the lowering.
"""

from __future__ import annotations

from oxtensor.tensor import _matrix
from oxtensor.tensor import basic as _basic
from oxtensor.tensor import math as _math

# Extent assumed for an index whose static extent is unknown, when comparing costs.
_UNKNOWN_EXTENT = 64


def _var(x):
    return _basic.as_tensor_variable(x)


def _parse(subscripts, ops):
    """The input terms and the output term, with NumPy's implicit output (the indices that
    occur once, sorted) when there is no ``->``."""
    subscripts = subscripts.replace(" ", "")
    if "..." in subscripts:
        raise NotImplementedError("einsum: ellipses are not supported")
    if "->" in subscripts:
        ins, out = subscripts.split("->")
    else:
        ins = subscripts
        letters = ins.replace(",", "")
        out = "".join(sorted(c for c in set(letters) if letters.count(c) == 1))
    terms = ins.split(",")
    if len(terms) != len(ops):
        raise ValueError(f"einsum: {len(terms)} subscripts for {len(ops)} operands")
    for t, o in zip(terms, ops):
        if len(t) != o.ndim:
            raise ValueError(f"einsum: subscript {t!r} for an operand of rank {o.ndim}")
        if not t.isalpha() and t:
            raise ValueError(f"einsum: subscript {t!r} has a character that is not a letter")
    if len(set(out)) != len(out):
        raise ValueError(f"einsum: output subscript {out!r} repeats an index")
    letters = set("".join(terms))
    for c in out:
        if c not in letters:
            raise ValueError(f"einsum: output index {c!r} is in no operand")
    return terms, out


def _extents(terms, ops):
    """Each index's static extent (``_UNKNOWN_EXTENT`` when no operand knows it), checking
    that operands agree."""
    sizes = {}
    for t, o in zip(terms, ops):
        for c, s in zip(t, o.type.shape):
            if s is None:
                continue
            if sizes.get(c, s) != s:
                raise ValueError(f"einsum: index {c!r} has extents {sizes[c]} and {s}")
            sizes[c] = s
    return {c: sizes.get(c, _UNKNOWN_EXTENT) for c in set("".join(terms))}


def _take_diagonals(term, x):
    """``x`` with each repeated index of ``term`` reduced to its diagonal (moved last)."""
    while True:
        repeated = next((c for c in term if term.count(c) > 1), None)
        if repeated is None:
            return term, x
        p = term.index(repeated)
        q = term.index(repeated, p + 1)
        x = _matrix.diagonal(x, 0, p, q)
        term = "".join(c for k, c in enumerate(term) if k not in (p, q)) + repeated


def _sum_out(term, x, keep):
    """``x`` summed over the indices of ``term`` not in ``keep``."""
    axes = tuple(k for k, c in enumerate(term) if c not in keep)
    if not axes:
        return term, x
    return "".join(c for c in term if c in keep), _math.sum(x, axis=axes)


def _size(x, dims):
    out = _basic.constant(1, dtype="int64")
    for d in dims:
        out = out * x.shape[d]
    return out


def _contract(ta, a, tb, b, keep):
    """The pairwise contraction of ``a`` (indices ``ta``) and ``b`` (``tb``), keeping the
    indices in ``keep``: ``(batch, free_a, summed) @ (batch, summed, free_b)`` as one matmul,
    its result indexed ``batch + free_a + free_b``."""
    batch = [c for c in ta if c in tb and c in keep]
    summed = [c for c in ta if c in tb and c not in keep]
    free_a = [c for c in ta if c not in tb]
    free_b = [c for c in tb if c not in ta]
    at = _basic.transpose(a, [ta.index(c) for c in batch + free_a + summed])
    bt = _basic.transpose(b, [tb.index(c) for c in batch + summed + free_b])
    nb, nfa, ns = len(batch), len(free_a), len(summed)
    lead = [_size(at, range(nb))] if batch else []
    m = _size(at, range(nb, nb + nfa))
    k = _size(at, range(nb + nfa, nb + nfa + ns))
    n = _size(bt, range(nb + ns, bt.ndim))
    am = _basic.reshape(at, lead + [m, k], ndim=len(lead) + 2)
    bm = _basic.reshape(bt, lead + [k, n], ndim=len(lead) + 2)
    prod = _math.matmul(am, bm)
    shape = [at.shape[d] for d in range(nb + nfa)] + [
        bt.shape[d] for d in range(nb + ns, bt.ndim)
    ]
    return "".join(batch + free_a + free_b), _basic.reshape(prod, shape, ndim=len(shape))


def _cost(ta, tb, keep, sizes):
    """opt_einsum's greedy cost of contracting two terms: the size of the result less the
    sizes of the two inputs (the memory the step frees, negated)."""
    result = {c for c in set(ta) | set(tb) if c in keep}

    def size(idx):
        out = 1
        for c in idx:
            out *= sizes[c]
        return out

    return size(result) - size(set(ta)) - size(set(tb))


def greedy_path(terms, out, sizes):
    """The pairs (positions in the current list, the result appended last) that opt_einsum's
    ``greedy`` strategy contracts, in order: at each step the pair sharing an index whose
    contraction frees the most memory, the fewest multiplications breaking ties (outer
    products only when no pair shares an index)."""
    terms = list(terms)
    path = []
    while len(terms) > 1:
        best = None
        for i in range(len(terms)):
            for j in range(i + 1, len(terms)):
                shares = bool(set(terms[i]) & set(terms[j]))
                others = "".join(t for k, t in enumerate(terms) if k not in (i, j))
                keep = set(out) | set(others)
                flops = 1
                for c in set(terms[i]) | set(terms[j]):
                    flops *= sizes[c]
                key = (not shares, _cost(terms[i], terms[j], keep, sizes), flops, i, j)
                if best is None or key < best[0]:
                    best = (key, keep)
        (*_, i, j), keep = best
        merged = [c for c in terms[i] + terms[j] if c in keep]
        rest = [t for k, t in enumerate(terms) if k not in (i, j)]
        terms = rest + ["".join(dict.fromkeys(merged))]
        path.append((i, j))
    return path


def einsum(subscripts, *operands, optimize=None):
    """``np.einsum`` for explicit or implicit subscripts without ellipses, lowered to
    matrix products along a greedy contraction path (``optimize`` is accepted for
    compatibility; the path is always the greedy one)."""
    ops = [_var(o) for o in operands]
    terms, out = _parse(subscripts, ops)
    sizes = _extents(terms, ops)
    pairs = []
    for t, o in zip(terms, ops):
        pairs.append(_take_diagonals(t, o))
    # Indices that only one operand has, and the output does not, are summed first.
    for k, (t, o) in enumerate(pairs):
        elsewhere = set(out).union(*(set(u) for j, (u, _) in enumerate(pairs) if j != k))
        pairs[k] = _sum_out(t, o, elsewhere)
    for i, j in greedy_path([t for t, _ in pairs], out, sizes):
        (ta, a), (tb, b) = pairs[i], pairs[j]
        rest = [p for k, p in enumerate(pairs) if k not in (i, j)]
        keep = set(out).union(*(set(t) for t, _ in rest))
        pairs = rest + [_contract(ta, a, tb, b, keep)]
    ((t, x),) = pairs
    t, x = _sum_out(t, x, set(out))
    if t == out:
        return x
    return _basic.transpose(x, [t.index(c) for c in out])
