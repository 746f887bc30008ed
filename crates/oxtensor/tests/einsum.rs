//! `einsum` as a graph builder: chosen and random subscripts (ellipses, repeated indices,
//! extent-1 broadcasting) against explicit loops in both backends, the contraction orders
//! agreeing, build errors naming the operand, run-time extent checks, and gradients against
//! finite differences.

use crate::linalg::{TOL, check, modes, t, uniform, vg};
use oxtensor::{DType, Mode, Tensor, TensorType, Var, function, ops};
use oxtensor_testkit::assert_close;

/// `np.einsum(spec, *ops)` by explicit loops over every index assignment: the reference for the
/// einsum tests (independent of the builder's parser: letters, one `...` per term standing for
/// the right-aligned broadcast dimensions, implicit output, extent 1 broadcasting).
fn einsum_reference(spec: &str, ops: &[Tensor]) -> Tensor {
    let spec: String = spec.chars().filter(|c| !c.is_whitespace()).collect();
    let (ins, out) = match spec.split_once("->") {
        Some((i, o)) => (i, Some(o)),
        None => (spec.as_str(), None),
    };
    let parts: Vec<&str> = ins.split(',').collect();
    let letters = |t: &str| t.chars().filter(|c| c.is_ascii_alphabetic()).count();
    let width = parts
        .iter()
        .zip(ops)
        .map(|(t, o)| o.shape().len() - letters(t))
        .max()
        .unwrap_or(0);
    // Ellipsis dimensions are labelled '0', '1', ... from the left of the broadcast block.
    let expand = |t: &str, covered: usize| -> Vec<char> {
        let (before, after) = t.split_once("...").unwrap_or((t, ""));
        let block = (width - covered..width).map(|d| (b'0' + d as u8) as char);
        before.chars().chain(block).chain(after.chars()).collect()
    };
    let terms: Vec<Vec<char>> = parts
        .iter()
        .zip(ops)
        .map(|(t, o)| expand(t, o.shape().len() - letters(t)))
        .collect();
    let out: Vec<char> = match out {
        Some(o) => expand(o, if o.contains("...") { width } else { 0 }),
        None => {
            let all: Vec<char> = parts.iter().flat_map(|t| t.chars()).collect();
            let mut once: Vec<char> = all
                .iter()
                .copied()
                .filter(|c| c.is_ascii_alphabetic() && all.iter().filter(|d| *d == c).count() == 1)
                .collect();
            once.sort_unstable();
            (0..width)
                .map(|d| (b'0' + d as u8) as char)
                .chain(once)
                .collect()
        }
    };
    let mut labels: Vec<char> = Vec::new();
    let mut extent: Vec<usize> = Vec::new();
    for (t, o) in terms.iter().zip(ops) {
        for (&c, &n) in t.iter().zip(o.shape()) {
            match labels.iter().position(|&l| l == c) {
                Some(k) => extent[k] = extent[k].max(n),
                None => {
                    labels.push(c);
                    extent.push(n);
                }
            }
        }
    }
    let pos = |c: &char| labels.iter().position(|l| l == c).expect("label");
    let values: Vec<Vec<f64>> = ops.iter().map(|o| o.to_vec_as::<f64>()).collect();
    let out_shape: Vec<usize> = out.iter().map(|c| extent[pos(c)]).collect();
    let mut result = vec![0.0; out_shape.iter().product()];
    let mut at = vec![0usize; labels.len()];
    let total: usize = extent.iter().product();
    for _ in 0..total {
        let mut product = 1.0;
        for ((t, o), v) in terms.iter().zip(ops).zip(&values) {
            let flat = t.iter().zip(o.shape()).fold(0, |acc, (c, &n)| {
                acc * n + if n == 1 { 0 } else { at[pos(c)] }
            });
            product *= v[flat];
        }
        let flat = out
            .iter()
            .fold(0, |acc, c| acc * extent[pos(c)] + at[pos(c)]);
        result[flat] += product;
        for k in (0..at.len()).rev() {
            at[k] += 1;
            if at[k] < extent[k] {
                break;
            }
            at[k] = 0;
        }
    }
    t(&result, &out_shape)
}

/// An input for `value`: static extent 1 where it has extent 1, unknown elsewhere (PyTensor's
/// broadcastable flags), or its full static shape.
fn einsum_input(name: &str, value: &Tensor, full_static: bool) -> Var {
    let shape: Vec<Option<usize>> = value
        .shape()
        .iter()
        .map(|&n| (full_static || n == 1).then_some(n))
        .collect();
    Var::input(Some(name), TensorType::new(DType::F64, &shape))
}

/// Random subscripts over up to five letters (some repeated within an operand, extents 1–3 so
/// that some broadcast), most with an ellipsis over up to two broadcast dimensions, with an
/// explicit output most of the time; and operands to match. Deterministic in `seed`.
fn random_einsum(seed: u64) -> (String, Vec<Tensor>) {
    let mut r = uniform(seed, 64).into_iter().map(|u| (u + 1.0) / 2.0);
    let mut pick = |n: usize| ((r.next().expect("enough draws") * n as f64) as usize).min(n - 1);
    let letters: Vec<char> = "abcde".chars().take(1 + pick(5)).collect();
    let sizes: Vec<usize> = letters.iter().map(|_| 1 + pick(3)).collect();
    let batch: Vec<usize> = (0..pick(3)).map(|_| 1 + pick(3)).collect();
    let (mut terms, mut ops) = (Vec::new(), Vec::new());
    for k in 0..1 + pick(3) {
        let term: Vec<usize> = (0..pick(4)).map(|_| pick(letters.len())).collect();
        let mut shape: Vec<usize> = term.iter().map(|&c| sizes[c]).collect();
        let mut text: String = term.iter().map(|&c| letters[c]).collect();
        if pick(5) > 0 {
            let covered = &batch[batch.len() - pick(batch.len() + 1)..];
            let cut = pick(term.len() + 1);
            text.insert_str(cut, "...");
            for (d, &n) in covered.iter().enumerate() {
                shape.insert(cut + d, if pick(4) == 0 { 1 } else { n });
            }
        }
        terms.push(text);
        let n: usize = shape.iter().product();
        ops.push(t(&uniform(seed * 31 + k as u64, n), &shape));
    }
    let mut spec = terms.join(",");
    if pick(4) > 0 {
        let used: Vec<char> = letters
            .iter()
            .copied()
            .filter(|c| spec.contains(*c))
            .collect();
        let mut out: String = used.iter().filter(|_| pick(2) == 0).collect();
        if spec.contains("...") || pick(2) == 0 {
            out.insert_str(pick(out.len() + 1), "...");
        }
        spec = format!("{spec}->{out}");
    }
    (spec, ops)
}

/// Checks `einsum(spec)` against [`einsum_reference`] for every case, all in one function per
/// mode (one compilation each), with inputs of full static shapes and of broadcastable flags.
fn check_einsum_cases(cases: &[(String, Vec<Tensor>)], modes: &[Mode]) {
    let (mut ins, mut outs, mut args, mut want) = (Vec::new(), Vec::new(), Vec::new(), Vec::new());
    for (c, (spec, ops)) in cases.iter().enumerate() {
        let reference = einsum_reference(spec, ops);
        for full_static in [true, false] {
            let xs: Vec<Var> = ops
                .iter()
                .enumerate()
                .map(|(k, o)| einsum_input(&format!("c{c}x{k}"), o, full_static))
                .collect();
            let e = ops::einsum(spec, &xs).unwrap_or_else(|e| panic!("{spec}: {e}"));
            if full_static {
                let shape: Vec<Option<usize>> =
                    reference.shape().iter().map(|&n| Some(n)).collect();
                assert_eq!(e.ty().shape.as_slice(), shape.as_slice(), "{spec}");
            }
            ins.extend(xs);
            outs.push(e);
            args.extend(ops.iter().cloned());
            want.push((spec.clone(), reference.clone()));
        }
    }
    for mode in modes {
        let f = function(&ins, &outs)
            .mode(mode.clone())
            .build()
            .expect("compile");
        let got = f.call(&args).expect("call");
        for (g, (spec, w)) in got.iter().zip(&want) {
            assert_close(spec, g, w, TOL);
        }
    }
}

#[test]
fn einsum_chosen_subscripts_match_explicit_loops_in_both_backends() {
    let cases: &[(&str, &[&[usize]])] = &[
        ("ij,jk->ik", &[&[3, 4], &[4, 2]]),
        ("bij,bjk->bik", &[&[2, 3, 4], &[2, 4, 2]]),
        ("ij,jk,kl->il", &[&[2, 5], &[5, 3], &[3, 4]]),
        ("ijk,jl,kl->i", &[&[3, 4, 2], &[4, 3], &[2, 3]]),
        ("ii,ij->j", &[&[3, 3], &[3, 2]]),
        ("iij->ji", &[&[2, 2, 3]]),
        ("ij,ij->", &[&[3, 2], &[3, 2]]),
        ("i,j,k->ijk", &[&[2], &[3], &[2]]),
        ("ba", &[&[2, 3]]),
        ("...ij,...jk", &[&[5, 1, 2, 3], &[4, 3, 2]]),
        ("i...j,j...", &[&[2, 3, 4, 2], &[2, 1, 4]]),
        ("a...,...b->...", &[&[2, 3, 1], &[4, 5]]),
        ("...ii->...i", &[&[1, 3, 3]]),
        ("ij,jk->ik", &[&[2, 1], &[3, 4]]),
        ("bchwkt,fckt->bfhw", &[&[2, 2, 2, 2, 2, 2], &[3, 2, 2, 2]]),
        ("i,i", &[&[4], &[4]]),
        ("", &[&[]]),
    ];
    let cases: Vec<(String, Vec<Tensor>)> = cases
        .iter()
        .enumerate()
        .map(|(c, (spec, shapes))| {
            let ops = shapes
                .iter()
                .enumerate()
                .map(|(k, s)| t(&uniform(100 * c as u64 + k as u64, s.iter().product()), s))
                .collect();
            (spec.to_string(), ops)
        })
        .collect();
    check_einsum_cases(&cases, &modes());
}

#[test]
fn einsum_random_subscripts_match_explicit_loops() {
    let cases: Vec<(String, Vec<Tensor>)> = (0..60).map(|s| random_einsum(1000 + s)).collect();
    check_einsum_cases(&cases, &[Mode::new("interp", "fast_run").expect("mode")]);
}

#[test]
fn einsum_contraction_orders_agree() {
    use ops::einsum::Optimize;
    let shapes: [&[usize]; 4] = [&[4, 2], &[2, 5], &[5, 3], &[3, 4]];
    let vals: Vec<Tensor> = shapes
        .iter()
        .enumerate()
        .map(|(k, s)| t(&uniform(40 + k as u64, s.iter().product()), s))
        .collect();
    let xs: Vec<Var> = vals
        .iter()
        .enumerate()
        .map(|(k, v)| einsum_input(&format!("x{k}"), v, true))
        .collect();
    let spec = "ab,bc,cd,da->";
    let outs: Vec<Var> = [
        Optimize::Auto,
        Optimize::Greedy,
        Optimize::Optimal,
        Optimize::RightToLeft,
    ]
    .into_iter()
    .map(|o| ops::einsum_with(spec, &xs, o).expect("einsum"))
    .collect();
    let want = einsum_reference(spec, &vals);
    check(
        &xs,
        &outs,
        &vals,
        &[want.clone(), want.clone(), want.clone(), want],
    );
}

#[test]
fn einsum_build_errors_name_the_operand() {
    let cases: &[(&str, &[&[usize]], &str)] = &[
        (
            "i.j",
            &[&[2, 3]],
            "operand 0's subscripts 'i.j' have a '.' that is not",
        ),
        (
            "i1",
            &[&[2, 2]],
            "have '1'; subscripts must be the letters a-z, A-Z",
        ),
        (
            "ij,...jk",
            &[&[2, 2], &[2]],
            "operand 1 has rank 1 but its subscripts '...jk' name 2",
        ),
        (
            "ij->ii",
            &[&[2, 2]],
            "the output subscripts 'ii' repeat the index 'i'",
        ),
        ("ij->k", &[&[2, 2]], "the output index 'k' is in no operand"),
        (
            "i,i",
            &[&[2], &[2], &[2]],
            "name 2 operand(s) but 3 operand(s) were given",
        ),
        (
            "...i->i",
            &[&[2, 3]],
            "no ellipsis, but the operands' ellipses cover 1",
        ),
        (
            "ii->i",
            &[&[2, 3]],
            "operand 0 repeats the index 'i' over dimensions of extents 2 and 3",
        ),
        (
            "ij,jk->ik",
            &[&[2, 3], &[4, 5]],
            "index 'j' has extent 3 in operand 0 but 4 in operand 1",
        ),
        (
            "...ij,...jk",
            &[&[5, 2, 2, 3], &[4, 3, 2]],
            "the ellipsis dimension 1 has extent 2",
        ),
    ];
    for (spec, shapes, want) in cases {
        let xs: Vec<Var> = shapes
            .iter()
            .map(|s| {
                Var::input(
                    Some("x"),
                    TensorType::new(DType::F64, &s.iter().map(|&n| Some(n)).collect::<Vec<_>>()),
                )
            })
            .collect();
        let e = ops::einsum(spec, &xs).expect_err(spec).to_string();
        assert!(e.starts_with("einsum: ") && e.contains(want), "{spec}: {e}");
    }
}

#[test]
fn einsum_unknown_extents_that_differ_raise_at_run_time_naming_the_operands() {
    let x = Var::input(Some("x"), TensorType::of_rank(DType::F64, 4));
    let y = Var::input(Some("y"), TensorType::of_rank(DType::F64, 4));
    let e = ops::einsum("bcij,bcjk->bcik", &[x.clone(), y.clone()]).expect("einsum");
    for mode in modes() {
        let f = function(&[x.clone(), y.clone()], std::slice::from_ref(&e))
            .mode(mode)
            .build()
            .expect("compile");
        let err = f
            .call(&[
                Tensor::zeros(DType::F64, &[1, 3, 2, 2]).expect("zeros"),
                Tensor::zeros(DType::F64, &[3, 1, 2, 2]).expect("zeros"),
            ])
            .expect_err("extents differ")
            .to_string();
        assert!(
            err.contains("has different extents in operand 1 and operand 0"),
            "{err}"
        );
    }
}

#[test]
fn gradients_of_einsum_match_finite_differences() {
    let cases: &[(&str, &[&[usize]])] = &[
        ("ij,jk->ik", &[&[3, 4], &[4, 2]]),
        ("ijk,jl,kl->i", &[&[2, 3, 2], &[3, 2], &[2, 2]]),
        ("ii,ij->j", &[&[3, 3], &[3, 2]]),
        ("...ij,...jk", &[&[3, 1, 2, 3], &[2, 3, 2]]),
        ("i...j,j...", &[&[2, 3, 2], &[2, 3]]),
    ];
    for (c, (spec, shapes)) in cases.iter().enumerate() {
        let points: Vec<Tensor> = shapes
            .iter()
            .enumerate()
            .map(|(k, s)| {
                t(
                    &uniform(200 + 10 * c as u64 + k as u64, s.iter().product()),
                    s,
                )
            })
            .collect();
        vg(spec, |xs| ops::einsum(spec, xs), &points);
    }
}

/// The static shapes of the operands of each matrix product of `outs`, in execution order.
fn products(outs: &[Var]) -> Vec<Vec<Vec<Option<usize>>>> {
    oxtensor::oxtensor_graph::toposort(outs)
        .iter()
        .filter(|n| matches!(n.op(), Some(oxtensor::oxtensor_graph::Op::MatMul)))
        .map(|n| n.inputs().iter().map(|x| x.ty().shape.to_vec()).collect())
        .collect()
}

/// `ij,jk,kl->il` over `(2, 6), (6, 6), (6, 6)` built on operands of unknown shape (one
/// `Einsum` node contracting right to left, `a (b c)`: a first product of `6×6` matrices),
/// then on static-shaped ones by
/// `clone_replace`: the `einsum_replan` rule plans NumPy's optimal order, `(a b) c`, and
/// inlines it. Values equal the loops before and after, in both backends, and gradients
/// through the node (and through its replanned form) match finite differences.
#[test]
fn einsum_is_replanned_once_static_shapes_are_known() {
    use oxtensor::Optimizer;
    use oxtensor::oxtensor_graph::{Op, clone_replace};
    let spec = "ij,jk,kl->il";
    let shapes: [&[usize]; 3] = [&[2, 6], &[6, 6], &[6, 6]];
    let vals: Vec<Tensor> = shapes
        .iter()
        .enumerate()
        .map(|(k, s)| t(&uniform(70 + k as u64, s.iter().product()), s))
        .collect();
    let unknown: Vec<Var> = (0..3)
        .map(|k| Var::input(Some(&format!("u{k}")), TensorType::of_rank(DType::F64, 2)))
        .collect();
    let e = ops::einsum(spec, &unknown).expect("einsum");
    let Some((Op::OpFromGraph(o), _)) = e.owner() else {
        panic!("not one einsum node: {e:?}");
    };
    assert_eq!(o.einsum.as_deref(), Some(spec));
    assert_eq!(products(o.body.outputs()).len(), 2);
    let s = |n: usize| Some(n);
    let fixed: Vec<Var> = vals
        .iter()
        .enumerate()
        .map(|(k, v)| einsum_input(&format!("s{k}"), v, true))
        .collect();
    let map = unknown.iter().cloned().zip(fixed.iter().cloned()).collect();
    let replaced = clone_replace(std::slice::from_ref(&e), &map).expect("replace");
    let planned = oxtensor::oxtensor_rewrite::rewrite_outputs(
        &replaced,
        &Optimizer::NONE.including(&["einsum"]),
    )
    .expect("rewrite")
    .0;
    let planned = products(&planned);
    assert_eq!(planned.len(), 2);
    assert_eq!(planned[0], vec![vec![s(2), s(6)], vec![s(6), s(6)]]);
    // The body's order on these shapes: `b c` first.
    let body_order = ops::einsum_with(spec, &fixed, ops::einsum::Optimize::RightToLeft);
    let body_order = products(&[body_order.expect("einsum")]);
    assert_eq!(body_order[0], vec![vec![s(6), s(6)], vec![s(6), s(6)]]);
    let want = einsum_reference(spec, &vals);
    check(
        &unknown,
        std::slice::from_ref(&e),
        &vals,
        std::slice::from_ref(&want),
    );
    check(&fixed, &replaced, &vals, &[want]);
    vg(
        "einsum node",
        |xs| {
            let map = unknown.iter().cloned().zip(xs.iter().cloned()).collect();
            Ok(clone_replace(std::slice::from_ref(&e), &map)?.remove(0))
        },
        &vals,
    );
}
