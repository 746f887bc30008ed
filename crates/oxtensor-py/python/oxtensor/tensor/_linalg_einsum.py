"""``pt.einsum`` lowered to matrix products: a contraction order chosen when the graph is
built (opt_einsum's ``greedy`` strategy, from the operands' static shapes), and each pairwise
contraction as one transpose and reshape per operand, one (batched) ``matmul``, and one
reshape back. Indices used by one operand only are summed before any product, and a repeated
index within one operand takes that operand's diagonal. Gradients follow from the lowering.

Subscripts (ellipses, implicit output, the interleaved form) are parsed by
``oxtensor.tensor._einsum_parse`` to one label per dimension. A dimension of static extent 1
broadcasts against a wider one of the same index, as in NumPy, by being squeezed out of its
operand before the contraction; extents unknown when the graph is built must be equal
across operands, as PyTensor assumes. Each pairwise contraction checks that at run time (an
``Assert`` raising ``ValueError`` that names the index and the operands): merged into one
``matmul`` dimension, mismatched extents of equal product (1·3 against 3·1) would otherwise
give a wrong result silently.
"""

from __future__ import annotations

from oxtensor.raise_op import CheckAndRaise
from oxtensor.tensor import _matrix
from oxtensor.tensor import basic as _basic
from oxtensor.tensor import math as _math
from oxtensor.tensor._einsum_parse import describe, parse, split_arguments

# Extent assumed for an index whose static extent is unknown, when comparing costs.
_UNKNOWN_EXTENT = 64


def _var(x):
    return _basic.as_tensor_variable(x)


def _check_extents(terms, ops):
    """Raises unless the operands' static extents agree: one operand's repeated index must
    have one extent (its diagonal), and across operands the known extents of an index other
    than 1 must be equal (1 broadcasts, as in NumPy)."""
    wide = {}
    for k, (t, o) in enumerate(zip(terms, ops)):
        mine = {}
        for c, s in zip(t, o.type.shape):
            if s is None:
                continue
            if mine.setdefault(c, s) != s:
                raise ValueError(
                    f"einsum: operand {k} repeats the {describe(c)} over dimensions of "
                    f"extents {mine[c]} and {s}; a repeated index takes a diagonal, which "
                    "needs equal extents"
                )
            if s == 1:
                continue
            first, j = wide.setdefault(c, (s, k))
            if first != s:
                raise ValueError(
                    f"einsum: the {describe(c)} has extent {first} in operand {j} "
                    f"but {s} in operand {k} (only an extent of 1 broadcasts)"
                )


def _squeeze_broadcast(pairs):
    """Each operand without the dimensions of static extent 1 whose index another operand
    has with an extent that is not statically 1: the operand is constant along them, so they
    broadcast (all of a repeated index's dimensions must be 1 for its diagonal to be one
    element). An extent unknown when the graph is built is not broadcast, as in PyTensor: it
    must match the other operands' at run time."""
    wide = {c for t, o in pairs for c, s in zip(t, o.type.shape) if s != 1}
    out = []
    for t, o in pairs:
        shape = o.type.shape
        ones = {c for c in wide if all(s == 1 for d, s in zip(t, shape) if d == c)}
        axes = tuple(k for k, c in enumerate(t) if c in ones)
        if axes:
            t = "".join(c for c in t if c not in ones)
            o = _basic.squeeze(o, axis=axes)
        out.append((t, o))
    return out


def _extents(pairs):
    """Each index's extent for comparing contraction costs: its static extent, or
    ``_UNKNOWN_EXTENT`` when no operand knows it."""
    sizes = {}
    for t, o in pairs:
        for c, s in zip(t, o.type.shape):
            if s is not None:
                sizes[c] = s
            else:
                sizes.setdefault(c, _UNKNOWN_EXTENT)
    return sizes


def _static_shape(terms, ops, out):
    """The result's static shape, which the symbolic reshapes of the lowering do not carry:
    an index's extent other than 1 where an operand knows it, 1 where every operand knows it
    is 1 (a broadcastable dimension), unknown otherwise."""
    wide, unknown = {}, set()
    for t, o in zip(terms, ops):
        for c, s in zip(t, o.type.shape):
            if s is None:
                unknown.add(c)
            elif s != 1:
                wide[c] = s
    return tuple(wide.get(c, None if c in unknown else 1) for c in out)


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


def _who(operands):
    """How a message names a term: the operand it is, or the operands multiplied into it."""
    ks = sorted(operands)
    if len(ks) == 1:
        return f"operand {ks[0]}"
    return "the product of operands " + ", ".join(map(str, ks))


def _guard_shared_extents(ta, a, wa, tb, b, wb):
    """``a``, checked at run time to have the extents of ``b`` along each index both have
    (``wa``, ``wb``: the original operands of each) where either extent is unknown when the
    graph is built; known extents were compared by ``_check_extents``."""
    for p, c in enumerate(ta):
        if c not in tb:
            continue
        q = tb.index(c)
        if a.type.shape[p] is not None and b.type.shape[q] is not None:
            continue
        check = CheckAndRaise(
            ValueError,
            f"einsum: the {describe(c)} has different extents in {_who(wa)} and {_who(wb)} "
            "(extents unknown when the graph is built must be equal; only a static extent of "
            "1 broadcasts)",
        )
        a = check(a, _math.eq(a.shape[p], b.shape[q]))
    return a


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
    """``np.einsum`` (explicit or implicit output, ellipses, the interleaved sublist form;
    ``oxtensor.tensor._einsum_parse``) lowered to matrix products along a greedy contraction
    path (``optimize`` is accepted for compatibility; the path is always the greedy one)."""
    subscripts, operands = split_arguments(subscripts, operands)
    ops = [_var(o) for o in operands]
    terms, out = parse(subscripts, ops)
    _check_extents(terms, ops)
    pairs = [_take_diagonals(t, o) for t, o in _squeeze_broadcast(list(zip(terms, ops)))]
    sizes = _extents(pairs)
    # Indices that only one operand has, and the output does not, are summed first.
    for k, (t, o) in enumerate(pairs):
        elsewhere = set(out).union(*(set(u) for j, (u, _) in enumerate(pairs) if j != k))
        pairs[k] = _sum_out(t, o, elsewhere)
    who = [{k} for k in range(len(pairs))]
    for i, j in greedy_path([t for t, _ in pairs], out, sizes):
        (ta, a), (tb, b) = pairs[i], pairs[j]
        a = _guard_shared_extents(ta, a, who[i], tb, b, who[j])
        rest = [p for k, p in enumerate(pairs) if k not in (i, j)]
        keep = set(out).union(*(set(t) for t, _ in rest))
        pairs = rest + [_contract(ta, a, tb, b, keep)]
        who = [w for k, w in enumerate(who) if k not in (i, j)] + [who[i] | who[j]]
    ((t, x),) = pairs
    t, x = _sum_out(t, x, set(out))
    if t != out:
        x = _basic.transpose(x, [t.index(c) for c in out])
    shape = _static_shape(terms, ops, out)
    if shape != x.type.shape:
        x = _basic.specify_shape(x, shape)
    return x
