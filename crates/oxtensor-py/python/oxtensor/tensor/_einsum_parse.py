"""Subscripts of ``pt.einsum`` parsed to one label per operand dimension, with NumPy's rules.

Both of NumPy's call forms are accepted: a subscripts string (``"...ij,...jk->...ik"``) and
the interleaved form ``einsum(op0, sublist0, op1, sublist1, ..., [sublistout])``, whose
sublists hold integers in ``[0, 52)`` (for ``a``–``z``, ``A``–``Z``) and ``Ellipsis``.

An ellipsis stands for the dimensions its operand has beyond the letters it names. Those
dimensions are right-aligned across operands (NumPy's broadcasting), and each aligned position
gets a label of its own, drawn from a private Unicode range so that it can never collide with
a letter: after parsing, the lowering sees only plain labels. The output keeps the broadcast
labels where its ``...`` is; an implicit output (no ``->``) puts them first, followed by the
letters used exactly once, sorted, as NumPy does.
"""

import operator
import string

# The letters NumPy accepts as subscripts, in the order of the interleaved form's integers.
_LETTERS = string.ascii_lowercase + string.ascii_uppercase

# First code point of the labels given to ellipsis dimensions (Unicode private use area).
_BROADCAST_BASE = 0xE000


def describe(c):
    """A label as an error message names it: the index letter, or the position among the
    dimensions the ellipses broadcast to (counted from the left)."""
    if ord(c) >= _BROADCAST_BASE:
        return f"ellipsis dimension {ord(c) - _BROADCAST_BASE}"
    return f"index {c!r}"


def split_arguments(subscripts, operands):
    """The subscripts string and the operands of either call form: ``(subscripts, operands)``
    unchanged for the string form, or the interleaved form's sublists joined into a string."""
    if isinstance(subscripts, str):
        return subscripts, list(operands)
    args = [subscripts, *operands]
    if len(args) < 2:
        raise ValueError(
            "einsum: expected a subscripts string or operands each followed by its sublist, "
            f"got one argument of type {type(subscripts).__name__}"
        )
    ops, sublists = args[0::2], args[1::2]
    out = None
    if len(args) % 2 == 1:
        # An odd count ends with the output sublist, taken above as one more operand.
        out = ops.pop()
    terms = [_sublist_term(s, f"the sublist of operand {k}") for k, s in enumerate(sublists)]
    spec = ",".join(terms)
    if out is not None:
        spec += "->" + _sublist_term(out, "the output sublist")
    return spec, ops


def _sublist_term(sublist, what):
    """One sublist of the interleaved form as subscript letters (``...`` for ``Ellipsis``)."""
    if isinstance(sublist, str) or not hasattr(sublist, "__iter__"):
        raise TypeError(
            f"einsum: {what} must be a list of integers and Ellipsis, got {type(sublist).__name__}"
        )
    letters = []
    for s in sublist:
        if s is Ellipsis:
            letters.append("...")
        elif hasattr(s, "__index__"):
            k = operator.index(s)
            if not 0 <= k < len(_LETTERS):
                raise ValueError(f"einsum: {what} has {k}, not within the valid range [0, 52)")
            letters.append(_LETTERS[k])
        else:
            raise TypeError(
                f"einsum: {what} must hold integers and Ellipsis, got {type(s).__name__} {s!r}"
            )
    return "".join(letters)


def _check_term(term, what):
    """``term`` split at its ellipsis: ``(before, after)``, ``after`` is ``None`` when it has
    none. Raises unless ``term`` is letters with at most one ``...``."""
    before, dots, after = term.partition("...")
    for part in (before, after):
        for c in part:
            if c == ".":
                raise ValueError(
                    f"einsum: {what} {term!r} have a '.' that is not part of an ellipsis '...'"
                    + (" (at most one ellipsis is allowed)" if dots else "")
                )
            if c not in _LETTERS:
                raise ValueError(
                    f"einsum: {what} {term!r} have {c!r}; subscripts must be the letters "
                    "a-z, A-Z and at most one ellipsis '...'"
                )
    return before, (after if dots else None)


def parse(subscripts, ops):
    """The labels of each operand's dimensions and of the output, for operands ``ops`` (whose
    ``ndim`` are read): ``(terms, out)``, strings of one label per dimension."""
    subscripts = "".join(subscripts.split())
    if subscripts.count("->") > 1:
        raise ValueError(f"einsum: subscripts {subscripts!r} have more than one '->'")
    ins, arrow, out = subscripts.partition("->")
    parts = ins.split(",")
    if len(parts) != len(ops):
        raise ValueError(
            f"einsum: subscripts {subscripts!r} name {len(parts)} operand(s) "
            f"but {len(ops)} operand(s) were given"
        )
    split = [_check_term(t, f"operand {k}'s subscripts") for k, t in enumerate(parts)]
    covered = []
    for k, ((before, after), o) in enumerate(zip(split, ops)):
        named = len(before) + len(after or "")
        if after is None and named != o.ndim:
            raise ValueError(
                f"einsum: operand {k} has rank {o.ndim} but its subscripts {parts[k]!r} name "
                f"{named} dimension(s) (write '...' to stand for the others)"
            )
        if named > o.ndim:
            raise ValueError(
                f"einsum: operand {k} has rank {o.ndim} but its subscripts {parts[k]!r} name "
                f"{named} dimension(s) besides the ellipsis"
            )
        covered.append(o.ndim - named)
    n_broadcast = max(covered, default=0)
    labels = "".join(chr(_BROADCAST_BASE + d) for d in range(n_broadcast))
    terms = [
        before + (labels[n_broadcast - e :] if after is not None else "") + (after or "")
        for (before, after), e in zip(split, covered)
    ]
    if not arrow:
        used = "".join(before + (after or "") for before, after in split)
        return terms, labels + "".join(sorted(c for c in set(used) if used.count(c) == 1))
    before, after = _check_term(out, "the output subscripts")
    if after is None and n_broadcast:
        raise ValueError(
            f"einsum: the output subscripts {out!r} have no ellipsis, but the operands' "
            f"ellipses cover {n_broadcast} dimension(s): write '...' in the output to keep them"
        )
    letters = before + (after or "")
    for c in letters:
        if letters.count(c) > 1:
            raise ValueError(f"einsum: the output subscripts {out!r} repeat the index {c!r}")
        if not any(c in t for t in terms):
            raise ValueError(f"einsum: the output index {c!r} is in no operand's subscripts")
    return terms, before + (labels if after is not None else "") + (after or "")
