//! The copying stages of a staged loop (`super::staged`): values gathered into C order, a
//! `Join` along any axis and a `Split` (its pullback) copying blocks of values in C order,
//! and a `CheckAndRaise`, a view of its value whose conditions a stage tests.

use super::scalar::ctype;
use super::staged::{SLOT, Stage, StagedLoop, ValueKind};
use super::staged_lower::{Lowering, keeps_layout, one_element};
use oxtensor_data::DType;
use oxtensor_graph::{Node, Var};
use std::fmt::Write;
use std::sync::Arc;

impl Lowering {
    /// Value `x` in C order: itself, or a copy gathered from a view of rank at most 2 that
    /// reads it out of order.
    pub(super) fn in_c_order(&mut self, x: usize) -> Option<usize> {
        if keeps_layout(&self.values, x) {
            return Some(x);
        }
        if self.values[x].ty.ndim() > 2 {
            return None;
        }
        let g = self.push(self.values[x].ty.clone(), ValueKind::Computed);
        self.stages.push(Stage::Gather {
            from: x,
            out: g,
            at: self.slots,
        });
        self.slots += SLOT;
        Some(g)
    }

    /// Lowers a `Join` along `axis` of values of its dtype and rank (gathered into C order
    /// when they are views that are not).
    pub(super) fn join(&mut self, node: &Arc<Node>, axis: usize) -> Option<()> {
        let out_ty = node.types().first()?;
        let mut args = Vec::new();
        for v in node.inputs() {
            let x = self.value(v)?;
            let t = &self.values[x].ty;
            if t.dtype != out_ty.dtype || t.ndim() != out_ty.ndim() {
                return None;
            }
            args.push(self.in_c_order(x)?);
        }
        if axis >= out_ty.ndim() || args.is_empty() {
            return None;
        }
        let out = self.define(Var::output_of(node, 0), ValueKind::Computed);
        self.stages.push(Stage::Join {
            args,
            axis,
            out,
            at: self.slots,
        });
        self.slots += 1;
        Some(())
    }

    /// Lowers a `Split` along `axis` of a value (in C order, or gathered into it) into pieces
    /// whose extents a param holds.
    pub(super) fn split(&mut self, node: &Arc<Node>, axis: usize) -> Option<()> {
        let x = self.value(node.inputs().first()?)?;
        let sizes = self.value(node.inputs().get(1)?)?;
        let t = &self.values[x].ty;
        if !self.is_param(sizes)
            || axis >= t.ndim()
            || node.types().iter().any(|o| o.dtype != t.dtype)
        {
            return None;
        }
        let x = self.in_c_order(x)?;
        let outs = self.outputs(node, self.values[x].ty.ndim())?;
        self.stages.push(Stage::Split {
            x,
            sizes,
            axis,
            outs,
            at: self.slots,
        });
        self.slots += 1;
        Some(())
    }

    /// Lowers a `CheckAndRaise` of one-element bool conditions: its value is a view of the
    /// value checked, and a [`Stage::Check`] tests the conditions each step (once the step has
    /// computed them; a condition known before the loop, such as an einsum's comparison of
    /// extents, is a param).
    pub(super) fn check(&mut self, node: &Arc<Node>) -> Option<()> {
        let (x, conds) = node.inputs().split_first()?;
        let of = self.value(x)?;
        let conds = conds
            .iter()
            .map(|c| {
                let v = self.value(c)?;
                let t = &self.values[v].ty;
                (t.dtype == DType::Bool && one_element(t)).then_some(v)
            })
            .collect::<Option<Vec<usize>>>()?;
        self.stages.push(Stage::Check { conds });
        let order = (0..self.values[of].ty.ndim()).map(Some).collect();
        self.define(Var::output_of(node, 0), ValueKind::View { of, order });
        Some(())
    }
}

/// The C of a [`Stage::Join`] (`join`: `whole` is the result, `parts` the values joined) or a
/// [`Stage::Split`] (`whole` is split into `parts`): `d[at]` blocks, each of every part's
/// block in turn (a part's block is its element count / `d[at]` elements). The executor
/// checked that the parts' extents add up to the whole's along the axis and agree elsewhere,
/// and no value is empty, so every copy is within its buffer.
pub(super) fn blocks(
    s: &mut String,
    p: &StagedLoop,
    (whole, parts): (usize, &[usize]),
    join: bool,
    at: usize,
) {
    let t = ctype(p.values[whole].ty.dtype);
    let _ = writeln!(
        s,
        "    {{\n      const int64_t nb = d[{at}];\n      const int64_t nw = nb > 0 ? d[{}] / nb : 0;\n      \
         for (int64_t b = 0; b < nb; b++) {{\n        int64_t o = b * nw;",
        p.numel_at(whole)
    );
    for part in parts {
        let n = format!("(d[{}] / nb)", p.numel_at(*part));
        let (to, from) = match join {
            true => (format!("v{whole} + o"), format!("v{part} + b * {n}")),
            false => (format!("v{part} + b * {n}"), format!("v{whole} + o")),
        };
        let _ = writeln!(
            s,
            "        memcpy({to}, {from}, (size_t){n} * sizeof({t}));\n        o += {n};"
        );
    }
    s.push_str("      }\n    }\n");
}
