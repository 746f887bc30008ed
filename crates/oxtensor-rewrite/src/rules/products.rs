//! Products and quotients (set `products`, in `canonicalize` and `stabilize`, as PyTensor's
//! `local_mul_canonizer` and `local_greedy_distributor`): a product of factors over a product of
//! factors ([`Ratio`]) loses the factors its numerator and denominator share, and a product
//! with a sum among its factors distributes the other factors over the sum's terms when that
//! cancels divisions, `((a/x + b/y) · x · y) → a·y + b·x`.
//!
//! Both change what NaN and infinity do, and carry the tag `nan_unsafe`: `(a·x)/x` is NaN
//! where `x` is 0 or infinite, `a` is not. PyTensor cancels unconditionally in its default
//! mode and so do we (`FAST_RUN` includes `nan_unsafe`); it is also what makes gradients of
//! saturating functions finite: the gradient of `log(sigmoid(z))` is `g/s · s·(1-s)`, which is
//! NaN where `s` underflows to 0 unless `s` cancels. Cancellation can also drop a factor's
//! run-time shape check (`(a·x)/x` no longer reads `x`), so `div_cancel` is `shape_unsafe` too;
//! the distributor keeps every factor it moves somewhere in the result unless the factor's
//! shape is static, so it needs no such tag.
//!
//! A ratio looks through `mul`, `true_div`, `neg`, `sqr` and `reciprocal` nodes of the matched
//! node's dtype that have no other user (the matched node itself always), up to a bounded
//! number of nodes, so matching costs constant time. Only float products are handled.

use crate::driver::type_fits;
use crate::pattern::{cast_to, elemwise_args, is_const, nary, scalar_like};
use crate::rule::{OpKind, Root, Rule, RuleCtx};
use oxtensor_data::DType;
use oxtensor_graph::build;
use oxtensor_graph::{Op, ScalarOp, Var};

/// How many nodes a [`Ratio`] opens at most (a bound on the cost of matching).
const OPEN_BUDGET: usize = 64;

/// `±(n₁·n₂·…)/(d₁·d₂·…)`: a product-quotient as multisets of factors and a sign.
#[derive(Clone, Debug)]
pub(crate) struct Ratio {
    /// The numerator's factors.
    pub(crate) num: Vec<Var>,
    /// The denominator's factors.
    pub(crate) den: Vec<Var>,
    /// An odd number of negations was looked through.
    pub(crate) neg: bool,
}

impl Ratio {
    /// `v` as a ratio: `v` itself is opened when it is a product, quotient, negation, square or
    /// reciprocal, and so are its inputs of `v`'s dtype that have no other user.
    pub(crate) fn of(v: &Var, cx: &RuleCtx<'_>) -> Ratio {
        Ratio::parse(v, true, cx)
    }

    /// `v` as a ratio, opening `v` itself only when it has no other user.
    pub(crate) fn of_shared(v: &Var, cx: &RuleCtx<'_>) -> Ratio {
        Ratio::parse(v, false, cx)
    }

    fn parse(v: &Var, open_root: bool, cx: &RuleCtx<'_>) -> Ratio {
        let mut r = Ratio {
            num: Vec::new(),
            den: Vec::new(),
            neg: false,
        };
        let dtype = v.dtype();
        let mut budget = OPEN_BUDGET;
        // (variable, in the denominator, may be opened whatever its users)
        let mut stack: Vec<(Var, bool, bool)> = vec![(v.clone(), false, open_root)];
        while let Some((x, inverse, root)) = stack.pop() {
            let openable = budget > 0 && (root || (x.dtype() == dtype && cx.single_client(&x)));
            let parts: Option<Vec<(Var, bool)>> = match x.owner() {
                Some((Op::Elemwise(s), args)) if openable => match (s, args) {
                    (ScalarOp::Mul, _) => Some(args.iter().map(|a| (a.clone(), inverse)).collect()),
                    (ScalarOp::TrueDiv, [a, b]) => {
                        Some(vec![(a.clone(), inverse), (b.clone(), !inverse)])
                    }
                    (ScalarOp::Sqr, [a]) => Some(vec![(a.clone(), inverse), (a.clone(), inverse)]),
                    (ScalarOp::Reciprocal, [a]) => Some(vec![(a.clone(), !inverse)]),
                    (ScalarOp::Neg, [a]) => {
                        r.neg = !r.neg;
                        Some(vec![(a.clone(), inverse)])
                    }
                    _ => None,
                },
                _ => None,
            };
            match parts {
                Some(parts) => {
                    budget -= 1;
                    // Reversed, so factors come out in their order in the graph.
                    stack.extend(parts.into_iter().rev().map(|(a, inv)| (a, inv, false)));
                }
                None if inverse => r.den.push(x),
                None => r.num.push(x),
            }
        }
        r
    }

    /// The ratio as a graph of `dtype`: `n₁·n₂·…` (without factors equal to 1) over
    /// `d₁·d₂·…`, negated when `neg`. `ndim` is the rank of every factor.
    pub(crate) fn build(&self, dtype: DType, ndim: usize) -> Option<Var> {
        let num: Vec<Var> = self
            .num
            .iter()
            .filter(|f| !is_const(f, 1.0))
            .cloned()
            .collect();
        let top = match nary(ScalarOp::Mul, &num) {
            Some(n) => n,
            None => scalar_like(1.0, dtype, ndim)?,
        };
        let q = match nary(ScalarOp::Mul, &self.den) {
            Some(d) => build::true_div(&top, &d).ok()?,
            None => top,
        };
        let signed = if self.neg { build::neg(&q).ok()? } else { q };
        cast_to(&signed, dtype)
    }
}

/// Removes one occurrence of `f` from `list`; false when there is none.
pub(crate) fn take(list: &mut Vec<Var>, f: &Var) -> bool {
    match list.iter().position(|x| x == f) {
        Some(at) => {
            list.remove(at);
            true
        }
        None => false,
    }
}

/// `v` rebuilt from `r` when that has `v`'s type (so it can replace `v`).
pub(crate) fn rebuilt(v: &Var, r: &Ratio) -> Option<Var> {
    let new = r.build(v.dtype(), v.ndim())?;
    type_fits(v, &new).then_some(new)
}

/// A cheap test, without allocating, before parsing a [`Ratio`] of `v`: true when `v` is a
/// float `mul`, `true_div` or `reciprocal`, and one of the nodes a ratio could look through or
/// stop at (within the same budget, whatever their users and dtypes) satisfies
/// `want(op, in_denominator)` (`op` is `None` for a node that is not elementwise).
pub(crate) fn scan(v: &Var, want: fn(Option<ScalarOp>, bool) -> bool) -> bool {
    fn walk(
        x: &Var,
        den: bool,
        budget: &mut usize,
        want: fn(Option<ScalarOp>, bool) -> bool,
    ) -> bool {
        let (op, args) = match x.owner() {
            Some((Op::Elemwise(s), args)) => (*s, args),
            _ => return want(None, den),
        };
        if want(Some(op), den) {
            return true;
        }
        let opens = matches!(
            op,
            ScalarOp::Mul
                | ScalarOp::TrueDiv
                | ScalarOp::Reciprocal
                | ScalarOp::Neg
                | ScalarOp::Sqr
        );
        if !opens || *budget == 0 {
            return false;
        }
        *budget -= 1;
        args.iter().enumerate().any(|(k, a)| {
            let flip = op == ScalarOp::Reciprocal || (op == ScalarOp::TrueDiv && k == 1);
            walk(a, den ^ flip, budget, want)
        })
    }
    let root = matches!(
        v.owner(),
        Some((
            Op::Elemwise(ScalarOp::Mul | ScalarOp::TrueDiv | ScalarOp::Reciprocal),
            _
        ))
    );
    let mut budget = OPEN_BUDGET;
    root && v.dtype().is_float() && walk(v, false, &mut budget, want)
}

// (a·x)/(x·b) → a/b   (nan_unsafe: x/x is NaN for x = 0, ±inf; shape_unsafe: x's extents are no longer checked)
fn div_cancel(v: &Var, cx: &RuleCtx<'_>) -> Option<Var> {
    if !scan(v, |_, den| den) {
        return None;
    }
    let mut r = Ratio::of(v, cx);
    let before = r.num.len();
    let den = std::mem::take(&mut r.den);
    for f in den {
        if !take(&mut r.num, &f) {
            r.den.push(f);
        }
    }
    if r.num.len() == before {
        return None;
    }
    rebuilt(v, &r)
}

/// The terms of a sum `s` (`add(t₁, t₂, …)` or `sub(t₁, t₂)`), and whether it is a `sub`.
fn terms(s: &Var) -> Option<(&[Var], bool)> {
    if let Some(args) = elemwise_args(s, ScalarOp::Add) {
        return Some((args, false));
    }
    elemwise_args(s, ScalarOp::Sub).map(|args| (args, true))
}

/// True when `f`'s extents are all static, so dropping it from a product drops no run-time
/// shape check.
fn static_shape(f: &Var) -> bool {
    f.ty().shape.iter().all(Option::is_some)
}

/// Moves the factor `f` (of the numerator, or of the denominator when `den`) of a product into
/// each of `terms` when it cancels against at least one of them and the product then needs no
/// more multiplications and divisions than before (PyTensor's score: one operation saved at
/// the product, one per cancellation, one added per other term). A factor that would cancel
/// everywhere, and so vanish, is moved only when its shape is static.
fn distribute_factor(terms: &mut [Ratio], f: &Var, den: bool) -> bool {
    let cancels = |t: &Ratio| {
        if den {
            t.num.contains(f)
        } else {
            t.den.contains(f)
        }
    };
    let hits = terms.iter().filter(|t| cancels(t)).count();
    let saved = 1 + hits as isize - (terms.len() - hits) as isize;
    if hits == 0 || saved < 0 || (hits == terms.len() && !static_shape(f)) {
        return false;
    }
    for t in terms.iter_mut() {
        let (same, other) = if den {
            (&mut t.num, &mut t.den)
        } else {
            (&mut t.den, &mut t.num)
        };
        if !take(same, f) {
            other.push(f.clone());
        }
    }
    true
}

// ((a/x + b/y) · x · y) → a·y + b·x,  ((a/x + b) · x) → a + b·x   (nan_unsafe: x/x is NaN for x = 0, ±inf)
fn distribute_div(v: &Var, cx: &RuleCtx<'_>) -> Option<Var> {
    if !scan(v, |op, _| matches!(op, Some(ScalarOp::Add | ScalarOp::Sub))) {
        return None;
    }
    let r = Ratio::of(v, cx);
    for (at, s) in r.num.iter().enumerate() {
        if s.dtype() != v.dtype() || !cx.single_client(s) {
            continue;
        }
        let Some((summands, is_sub)) = terms(s) else {
            continue;
        };
        let mut parts: Vec<Ratio> = summands.iter().map(|t| Ratio::of_shared(t, cx)).collect();
        let mut rest = Ratio {
            num: Vec::new(),
            den: Vec::new(),
            neg: r.neg,
        };
        for (j, f) in r.num.iter().enumerate() {
            if j != at && !distribute_factor(&mut parts, f, false) {
                rest.num.push(f.clone());
            }
        }
        for f in &r.den {
            if !distribute_factor(&mut parts, f, true) {
                rest.den.push(f.clone());
            }
        }
        if rest.num.len() + 1 == r.num.len() && rest.den.len() == r.den.len() {
            continue;
        }
        let built = parts
            .iter()
            .map(|p| p.build(v.dtype(), v.ndim()))
            .collect::<Option<Vec<_>>>()?;
        let sum = if is_sub {
            let [a, b] = <[Var; 2]>::try_from(built).ok()?;
            build::sub(&a, &b).ok()?
        } else {
            nary(ScalarOp::Add, &built)?
        };
        rest.num.insert(0, sum);
        return rebuilt(v, &rest);
    }
    None
}

/// The product and quotient rules.
pub const RULES: &[Rule] = &[
    Rule::new("div_cancel", Root::Op(OpKind::Elemwise), div_cancel)
        .tagged(&["nan_unsafe", "shape_unsafe"]),
    Rule::new("distribute_div", Root::Op(OpKind::Elemwise), distribute_div).tagged(&["nan_unsafe"]),
];
