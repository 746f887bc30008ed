"""``pt.einsum`` with ellipses, broadcasting and the interleaved sublist form: values against
``numpy.einsum`` on seeded random subscripts (both modes; static shapes, and unknown shapes
with static broadcastable flags), static output shapes and values against PyTensor's
``einsum``, PyTensor's documented examples, gradients against finite differences, and the
errors for malformed subscripts (type as NumPy's, message naming what was expected)."""

import ast
import importlib
import re
import string
import textwrap
import warnings

import numpy as np
import pytest

import oxtensor
import oxtensor.tensor as pt
from oxtensor.gradient import verify_grad
from test_linalg import MODES, fd_check, run


def random_ellipsis_einsum(rng):
    """Random subscripts with ellipses and operands to match: 1–4 operands, each with 0–3
    letters (some repeated) around an ellipsis that covers the last 0–3 dimensions of a
    random broadcast shape, where any dimension (ellipsis or lettered) may be 1 so that it
    broadcasts. Returns the subscripts and the operands' values."""
    letters = string.ascii_letters[rng.integers(0, 48) :][: rng.integers(1, 6)]
    sizes = {c: int(rng.integers(1, 4)) for c in letters}
    batch = [int(rng.integers(1, 4)) for _ in range(rng.integers(0, 4))]
    terms, ops, widest = [], [], 0
    for _ in range(rng.integers(1, 5)):
        term = "".join(rng.choice(list(letters), size=rng.integers(0, 4)))
        if rng.random() < 0.85:
            cut = int(rng.integers(0, len(term) + 1))
            covered = batch[len(batch) - int(rng.integers(0, len(batch) + 1)) :]
            dims = list(term[:cut]) + [None] * len(covered) + list(term[cut:])
            shape = [sizes[c] for c in term[:cut]] + covered + [sizes[c] for c in term[cut:]]
            term = term[:cut] + "..." + term[cut:]
            widest = max(widest, len(covered))
        else:
            dims, shape = list(term), [sizes[c] for c in term]
        shape = [1 if rng.random() < 0.2 else s for s in shape]
        # A repeated letter takes a diagonal: its dimensions in one operand must be equal.
        for c in set(term) - {"."}:
            first = dims.index(c)
            for k in range(first + 1, len(dims)):
                if dims[k] == c:
                    shape[k] = shape[first]
        terms.append(term)
        ops.append(rng.standard_normal(shape))
    spec = ",".join(terms)
    if rng.random() < 0.75:
        used = sorted(set(spec) - set(".,"))
        out = [c for c in used if rng.random() < 0.5]
        out = list(rng.permutation(out)) if out else []
        # The output may leave the ellipsis out only when it covers no dimension.
        if widest or rng.random() < 0.5:
            out.insert(int(rng.integers(0, len(out) + 1)), "...")
        spec += "->" + "".join(out)
    return spec, ops


def broadcastable_type(value, name):
    """A variable for ``value`` whose static shape is 1 where ``value`` has extent 1 and
    unknown elsewhere (a broadcastable flag, not a full static shape)."""
    return pt.tensor(name, dtype="float64", shape=tuple(1 if s == 1 else None for s in value.shape))


def static_type(value, name):
    """A variable for ``value`` with its full static shape."""
    return pt.tensor(name, dtype="float64", shape=value.shape)


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("make", [static_type, broadcastable_type])
def test_random_ellipsis_subscripts_match_numpy(mode, make):
    rng = np.random.default_rng(1414)
    for case in range(80):
        spec, ops = random_ellipsis_einsum(rng)
        xs = [make(o, f"x{k}") for k, o in enumerate(ops)]
        out = pt.einsum(spec, *xs)
        got = run(xs, [out], ops, mode)[0]
        want = np.einsum(spec, *ops)
        msg = f"{case}: {spec} {[o.shape for o in ops]}"
        assert got.shape == want.shape, msg
        np.testing.assert_allclose(got, want, rtol=1e-10, atol=1e-10, err_msg=msg)
        if make is static_type:
            assert out.type.shape == want.shape, msg


def to_interleaved(spec, ops):
    """The interleaved form's arguments for string subscripts: each operand followed by its
    letters as integers (``a``–``z`` as 0–25, ``A``–``Z`` as 26–51) and ``Ellipsis``, and
    the output's sublist last when the subscripts have ``->``."""

    def sublist(term):
        before, dots, after = term.partition("...")
        index = string.ascii_letters.index
        return [index(c) for c in before] + [Ellipsis] * bool(dots) + [index(c) for c in after]

    ins, arrow, out = spec.partition("->")
    args = [a for op, term in zip(ops, ins.split(",")) for a in (op, sublist(term))]
    return args + ([sublist(out)] if arrow else [])


@pytest.mark.parametrize("mode", MODES)
def test_interleaved_form_matches_numpy(mode):
    rng = np.random.default_rng(52)
    for case in range(30):
        spec, ops = random_ellipsis_einsum(rng)
        xs = [static_type(o, f"x{k}") for k, o in enumerate(ops)]
        got = run(xs, [pt.einsum(*to_interleaved(spec, xs))], ops, mode)[0]
        want = np.einsum(*to_interleaved(spec, ops))
        np.testing.assert_allclose(got, want, rtol=1e-10, atol=1e-10, err_msg=f"{case}: {spec}")


@pytest.mark.parametrize(
    "spec, shapes, out_shape",
    [
        ("...ij,...jk->...ik", [(2, 3, 4), (2, 4, 5)], (2, 3, 5)),
        ("...ij,...jk", [(5, 1, 2, 3), (4, 3, 2)], (5, 4, 2, 2)),
        ("i...->...", [(2, 3, 4)], (3, 4)),
        ("i...j,j...", [(2, 3, 4, 5), (5, 1, 4)], (3, 4, 2)),
        ("ij,jk->ik", [(2, 1), (3, 4)], (2, 4)),
        ("...,...", [(3, 1), (1, 3)], (3, 3)),
        ("a...,...b->...", [(2, 3, 1), (4, 5)], (3, 4)),
        ("...ii->...i", [(1, 3, 3)], (1, 3)),
        ("ba...", [(2, 3)], (3, 2)),
    ],
)
def test_chosen_cases_values_and_static_shapes(spec, shapes, out_shape):
    rng = np.random.default_rng(9)
    ops = [rng.standard_normal(s) for s in shapes]
    xs = [static_type(o, f"x{k}") for k, o in enumerate(ops)]
    out = pt.einsum(spec, *xs)
    assert out.type.shape == out_shape
    got = run(xs, [out], ops)[0]
    np.testing.assert_allclose(got, np.einsum(spec, *ops), rtol=1e-12, atol=1e-12)


def test_broadcastable_flags_follow_the_operands():
    a = pt.tensor("a", dtype="float64", shape=(1, None, 3))
    b = pt.tensor("b", dtype="float64", shape=(1, 3, None))
    assert pt.einsum("...ij,...jk->...ik", a, b).type.shape == (1, None, None)
    c = pt.tensor("c", dtype="float64", shape=(None, None, 3))
    assert pt.einsum("...ij,...jk->...ik", c, b).type.shape == (None, None, None)


def test_unknown_extents_do_not_broadcast_at_run_time():
    """As in PyTensor, an extent unknown when the graph is built is assumed to match the
    others: 1 against 2 at run time is an error, not a broadcast."""
    for spec, a, b in [
        ("ij,ij->ij", (1, 3), (2, 3)),
        ("ij,jk->ik", (2, 1), (3, 4)),
        ("...ij,...jk", (5, 1, 2, 3), (4, 3, 2)),
        # Batch dimensions merged into one matmul dimension: 1·3 against 3·1 has equal
        # products, which only the run-time check of each index's extents catches.
        ("bcij,bcjk->bcik", (1, 3, 2, 2), (3, 1, 2, 2)),
        # The same for summed dimensions merged into the matmul's inner dimension.
        ("ijk,jkl->il", (2, 1, 3), (3, 1, 2)),
    ]:
        x = pt.tensor("x", dtype="float64", shape=(None,) * len(a))
        y = pt.tensor("y", dtype="float64", shape=(None,) * len(b))
        f = oxtensor.function([x, y], pt.einsum(spec, x, y))
        with pytest.raises(ValueError):
            f(np.ones(a), np.ones(b))


def test_merged_unknown_extents_raise_naming_the_index_and_operands():
    x = pt.tensor("x", dtype="float64", shape=(None,) * 4)
    y = pt.tensor("y", dtype="float64", shape=(None,) * 4)
    for mode in ["FAST_RUN", "FAST_COMPILE", "interp"]:
        f = oxtensor.function([x, y], pt.einsum("bcij,bcjk->bcik", x, y), mode=mode)
        with pytest.raises(ValueError, match=r"index '[bc]' has different extents in operand [01] and operand [01]"):
            f(np.ones((1, 3, 2, 2)), np.ones((3, 1, 2, 2)))
        a, b = np.arange(24.0).reshape(2, 3, 2, 2), np.arange(24.0).reshape(2, 3, 2, 2) - 5
        np.testing.assert_allclose(f(a, b), np.einsum("bcij,bcjk->bcik", a, b), rtol=1e-13)


@pytest.mark.parametrize(
    "spec, shapes",
    [
        ("...ij,...jk->...ik", [(2, 3, 4), (2, 4, 2)]),
        ("i...->...", [(2, 3, 2)]),
        ("...ii->...i", [(2, 3, 3)]),
        ("i...j,j...", [(2, 3, 2), (2, 3)]),
        ("...i,...i", [(3, 2), (2,)]),
    ],
)
def test_gradients_match_finite_differences(spec, shapes):
    rng = np.random.default_rng(4)
    fd_check(lambda *xs: pt.einsum(spec, *xs), [rng.standard_normal(s) for s in shapes], rng)


@pytest.mark.parametrize(
    "spec, shapes",
    [
        ("...ij,...jk", [(3, 1, 2, 3), (2, 3, 2)]),
        ("ij,jk->ik", [(2, 1), (3, 4)]),
        ("...,...->...", [(3, 1), (1, 3)]),
        ("ii...,i...->...", [(1, 1, 2), (3, 2)]),
    ],
)
def test_broadcasting_gradients_pass_verify_grad(spec, shapes):
    rng = np.random.default_rng(5)
    args = [rng.standard_normal(s) for s in shapes]
    verify_grad(lambda *xs: pt.einsum(spec, *xs), args, rng=rng)


@pytest.mark.parametrize(
    "spec, shapes, error, match",
    [
        ("i.j", [(2, 3)], ValueError, r"operand 0's subscripts 'i\.j' have a '\.' that is not"),
        ("i...j...", [(2, 3)], ValueError, r"at most one ellipsis"),
        ("i1", [(2, 2)], ValueError, r"have '1'; subscripts must be the letters a-z, A-Z"),
        ("ij", [(2,)], ValueError, r"operand 0 has rank 1 but its subscripts 'ij' name 2"),
        ("...ij", [(2,)], ValueError, r"operand 0 has rank 1 .* besides the ellipsis"),
        ("ij,...jk", [(2, 2), (2,)], ValueError, r"operand 1 has rank 1 .*'\.\.\.jk' name 2"),
        ("ij->", [(2, 3, 4)], ValueError, r"rank 3 .*write '\.\.\.'"),
        ("ij->ii", [(2, 2)], ValueError, r"output subscripts 'ii' repeat the index 'i'"),
        ("ij->k", [(2, 2)], ValueError, r"output index 'k' is in no operand"),
        ("ij->i.", [(2, 2)], ValueError, r"the output subscripts 'i\.' have a '\.'"),
        ("ij,jk", [(2, 2)], ValueError, r"name 2 operand\(s\) but 1 operand\(s\) were given"),
        ("i,i", [(2,), (2,), (2,)], ValueError, r"name 2 operand\(s\) but 3"),
        ("ij->i->j", [(2, 2)], ValueError, r"more than one '->'"),
        ("...i->i", [(2, 3)], ValueError, r"no ellipsis, but the operands' ellipses cover 1"),
        ("ii->i", [(2, 3)], ValueError, r"operand 0 repeats the index 'i' .* 2 and 3"),
        ("ij,jk->ik", [(2, 3), (4, 5)], ValueError, r"index 'j' has extent 3 in operand 0 but 4"),
        ("...ij,...jk", [(5, 2, 2, 3), (4, 3, 2)], ValueError, r"ellipsis dimension 1 has"),
    ],
)
def test_malformed_subscripts_raise_like_numpy(spec, shapes, error, match):
    ops = [np.zeros(s) for s in shapes]
    with pytest.raises(error):
        np.einsum(spec, *ops)
    with pytest.raises(error, match=match):
        pt.einsum(spec, *[static_type(o, f"x{k}") for k, o in enumerate(ops)])


@pytest.mark.parametrize(
    "sublist, error, match",
    [
        ([52], ValueError, r"has 52, not within the valid range \[0, 52\)"),
        (["a"], TypeError, r"must hold integers and Ellipsis, got str"),
        (3, TypeError, r"must be a list of integers and Ellipsis, got int"),
    ],
)
def test_malformed_sublists_raise_like_numpy(sublist, error, match):
    with pytest.raises(error):
        np.einsum(np.zeros(2), sublist)
    with pytest.raises(error, match=match):
        pt.einsum(pt.dvector("x"), sublist)


def test_a_lone_operand_raises_like_numpy():
    with pytest.raises(ValueError):
        np.einsum(np.zeros(2))
    with pytest.raises(ValueError, match="operands each followed by its sublist"):
        pt.einsum(pt.dvector("x"))


def pytensor_einsum(spec, ops, shape_of):
    """PyTensor's ``einsum`` of ``ops`` (variables of static shapes ``shape_of(op)``): its
    output's static shape and its value, run without C compilation (seconds less each)."""
    pytensor = pytest.importorskip("pytensor")
    ptt = pytest.importorskip("pytensor.tensor")
    xs = [ptt.tensor(f"x{k}", dtype="float64", shape=shape_of(o)) for k, o in enumerate(ops)]
    with warnings.catch_warnings(), pytensor.config.change_flags(cxx=""):
        warnings.simplefilter("ignore")
        out = ptt.einsum(spec, *xs)
        mode = pytensor.compile.mode.Mode(linker="py", optimizer=None)
        return out.type.shape, pytensor.function(xs, out, mode=mode)(*ops)


@pytest.mark.parametrize(
    "spec, shapes",
    [
        ("...ij,...jk->...ik", [(2, 3, 4), (2, 4, 5)]),
        ("...ij,...jk", [(5, 1, 2, 3), (4, 3, 2)]),
        ("i...->...", [(2, 3, 4)]),
        ("i...j,j...", [(2, 3, 4, 5), (5, 1, 4)]),
        ("a...,...b->...", [(2, 3, 1), (4, 5)]),
        ("bi...,bj...->b...ij", [(2, 3, 1), (2, 4, 5)]),
    ],
)
def test_ellipses_agree_with_pytensor(spec, shapes):
    rng = np.random.default_rng(11)
    ops = [rng.standard_normal(s) for s in shapes]
    for shape_of in (lambda o: o.shape, lambda o: tuple(1 if s == 1 else None for s in o.shape)):
        their_shape, theirs = pytensor_einsum(spec, ops, shape_of)
        xs = [pt.tensor(f"x{k}", dtype="float64", shape=shape_of(o)) for k, o in enumerate(ops)]
        out = pt.einsum(spec, *xs)
        # Ours knows at least the extents PyTensor's static shape knows (sometimes more).
        assert all(t is None or o == t for o, t in zip(out.type.shape, their_shape)), spec
        np.testing.assert_allclose(run(xs, [out], ops)[0], theirs, rtol=1e-12, atol=1e-12)


def pytensor_docstring_examples():
    """The code blocks of PyTensor's ``einsum`` docstring, read from the installed PyTensor.
    Their first line, ``import pytensor as pt``, does not give ``pt.matrix`` or ``pt.einsum``
    in PyTensor either (they are in ``pytensor.tensor``), and the fifth block has a stray
    quote (``(""bchwkt``): both are the docstring's typos, fixed here and nothing else."""
    einsum_module = importlib.import_module("pytensor.tensor.einsum")
    code_block = r"\.\. code-block:: python\n\n((?:(?: {8,}.*)?\n)+)"
    blocks = re.findall(code_block, einsum_module.einsum.__doc__)
    blocks = [textwrap.dedent(b).replace("import pytensor as pt\n", "") for b in blocks]
    return [b.replace('(""', '("') for b in blocks]


def run_example(code, pt_module, function, values=None):
    """Runs an example's code with ``pt`` bound to ``pt_module``, then the function it builds
    (its inputs, in order of creation, to the variable its last line assigns) on ``values``,
    random by default with 3 for each unknown extent. Returns the values and the result."""
    ns = {"pt": pt_module}
    exec(code, ns)
    result = ns[ast.parse(code).body[-1].targets[0].id]
    inputs = [v for k, v in ns.items() if k != "pt" and v is not result and hasattr(v, "type")]
    if values is None:
        rng = np.random.default_rng(8)
        shapes = [[3 if s is None else s for s in x.type.shape] for x in inputs]
        values = [rng.standard_normal(s) for s in shapes]
    return values, function(inputs, result)(*values)


def test_random_ellipsis_subscripts_agree_with_pytensor():
    rng = np.random.default_rng(77)
    for case in range(12):
        spec, ops = random_ellipsis_einsum(rng)
        make = (static_type, broadcastable_type)[case % 2]
        xs = [make(o, f"x{k}") for k, o in enumerate(ops)]
        ours = run(xs, [pt.einsum(spec, *xs)], ops)[0]
        _, theirs = pytensor_einsum(spec, ops, lambda o: make(o, "v").type.shape)
        np.testing.assert_allclose(ours, theirs, rtol=1e-10, atol=1e-10, err_msg=f"{case}: {spec}")


def test_pytensor_docstring_examples_run_and_agree():
    pytensor = pytest.importorskip("pytensor")
    mode = pytensor.compile.mode.Mode(linker="py", optimizer=None)
    examples = pytensor_docstring_examples()
    assert len(examples) == 5
    for code in examples:
        values, ours = run_example(code, pt, oxtensor.function)
        spec = re.search(r'einsum\("([^"]*)"', code).group(1)
        np.testing.assert_allclose(ours, np.einsum(spec, *values), rtol=1e-12, atol=1e-12)
        with warnings.catch_warnings(), pytensor.config.change_flags(cxx=""):
            warnings.simplefilter("ignore")
            _, theirs = run_example(
                code,
                importlib.import_module("pytensor.tensor"),
                lambda i, o: pytensor.function(i, o, mode=mode),
                values,
            )
        np.testing.assert_allclose(ours, theirs, rtol=1e-12, atol=1e-12, err_msg=code)
