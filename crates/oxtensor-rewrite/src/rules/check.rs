//! Useless run-time checks (`Op::CheckAndRaise`, in the `useless` set): conditions known to
//! hold at compile time are dropped, and a check left without conditions is its value
//! (PyTensor's `local_remove_useless_assert`). A check nothing reads is not part of the graph
//! (no dead code exists), and identical checks are one node (hash-consing); a condition known to
//! fail is kept, so the call raises at run time.

use oxtensor_graph::build::check::check_and_raise;
use oxtensor_graph::{Op, Var};

/// True for a constant condition that holds (nonzero; NaN counts as true, as NumPy's `bool`).
fn holds(c: &Var) -> bool {
    c.constant_value()
        .and_then(|t| t.item::<bool>())
        .unwrap_or(false)
}

// check(x, c1, …, cn) → check(x, the ci not constant true)   (→ x when none is left)
pub(super) fn remove_useless_check(v: &Var, _: &crate::rule::RuleCtx<'_>) -> Option<Var> {
    let (Op::CheckAndRaise(check), [x, conds @ ..]) = v.owner()? else {
        return None;
    };
    let rest: Vec<Var> = conds.iter().filter(|c| !holds(c)).cloned().collect();
    if rest.is_empty() {
        return Some(x.clone());
    }
    if rest.len() == conds.len() {
        return None;
    }
    check_and_raise(x, &rest, check.clone()).ok()
}
