use crate::{Node, NodeKind, Op, Var};
use rustc_hash::FxHashMap;
use std::fmt::Write;

/// What [`debugprint`] shows beside each variable.
#[derive(Clone, Copy, Debug, Default)]
pub struct PrintOptions {
    /// Append each variable's type (`<Vector(float64, shape=(?,))>`).
    pub print_type: bool,
    /// Stop descending below this depth (`None`: no limit).
    pub depth: Option<usize>,
}

/// PyTensor's id labels: A … Z, BA, BB, …
fn label(mut n: usize) -> String {
    let mut s = Vec::new();
    loop {
        s.push(b'A' + (n % 26) as u8);
        n /= 26;
        if n == 0 {
            break;
        }
    }
    s.reverse();
    String::from_utf8(s).unwrap_or_default()
}

struct Printer {
    ids: FxHashMap<u64, String>,
    opts: PrintOptions,
    out: String,
    /// Nodes with inner graphs met (Composite, FusedReduce, FusedMatMul, OpFromGraph, IfElse), whose inner graphs are
    /// printed after the outer graph.
    inner: Vec<Var>,
}

impl Printer {
    fn id_of(&mut self, node: &Node) -> (String, bool) {
        let next = self.ids.len();
        let mut fresh = false;
        let id = self.ids.entry(node.id()).or_insert_with(|| {
            fresh = true;
            label(next)
        });
        (id.clone(), fresh)
    }

    fn head(&mut self, v: &Var) -> (String, bool) {
        let (id, fresh) = self.id_of(v.node());
        let mut text = match v.node().kind() {
            NodeKind::Apply { op, .. } => {
                let multi = op.n_outputs() > 1;
                let mut t = if multi {
                    format!("{op}.{}", v.index())
                } else {
                    op.to_string()
                };
                t.push_str(&format!(" [id {id}]"));
                if let Some(n) = v.name() {
                    t.push_str(&format!(" '{n}'"));
                }
                t
            }
            NodeKind::Constant(c) => format!("{} [id {id}]", render_constant(c)),
            NodeKind::Input | NodeKind::Shared(_) => {
                format!("{} [id {id}]", v.name().as_deref().unwrap_or("<unnamed>"))
            }
            NodeKind::Placeholder(i) => format!("*{i}-<{}> [id {id}]", v.ty()),
        };
        if self.opts.print_type {
            text.push_str(&format!(" <{}>", v.ty()));
        }
        (text, fresh)
    }

    fn walk(&mut self, v: &Var, prefix: &str, branch: &str, depth: usize) {
        let (text, fresh) = self.head(v);
        let _ = writeln!(self.out, "{prefix}{branch}{text}");
        if fresh
            && matches!(
                v.owner(),
                Some((
                    Op::Composite(_)
                        | Op::FusedReduce { .. }
                        | Op::FusedMatMul { .. }
                        | Op::OpFromGraph(_)
                        | Op::IfElse(_)
                        | Op::Scan(_),
                    _
                ))
            )
        {
            self.inner.push(v.clone());
        }
        if !fresh || self.opts.depth.is_some_and(|d| depth + 1 >= d) {
            return;
        }
        let child_prefix = match branch {
            "" => format!("{prefix} "),
            "├─ " => format!("{prefix}│  "),
            " ← " => format!("{prefix}    "),
            _ => format!("{prefix}   "),
        };
        let inputs = v.node().inputs();
        for (i, input) in inputs.iter().enumerate() {
            let last = i + 1 == inputs.len();
            self.walk(
                input,
                &child_prefix,
                if last { "└─ " } else { "├─ " },
                depth + 1,
            );
        }
    }
}

fn render_constant(c: &oxtensor_data::Tensor) -> String {
    let values = c.to_vec_as::<f64>();
    let fmt_one = |x: f64| {
        if c.dtype().is_float() {
            let s = format!("{x}");
            if s.contains('.') || s.contains('e') || s.contains("inf") || s.contains("NaN") {
                s
            } else {
                format!("{s}.0")
            }
        } else if c.dtype().is_bool() {
            (x != 0.0).to_string()
        } else {
            format!("{}", x as i64)
        }
    };
    match c.ndim() {
        0 => fmt_one(values[0]),
        _ if values.len() <= 8 => format!(
            "[{}]",
            values
                .iter()
                .map(|&x| fmt_one(x))
                .collect::<Vec<_>>()
                .join(" ")
        ),
        _ => format!("<{} constant of shape {:?}>", c.dtype(), c.shape()),
    }
}

/// Renders `outputs` as PyTensor's `debugprint` does: one line per variable, children indented
/// under their user, each node labelled `[id X]`, a node used twice printed in full only once.
pub fn debugprint(outputs: &[Var], opts: PrintOptions) -> String {
    let mut p = Printer {
        ids: FxHashMap::default(),
        opts,
        out: String::new(),
        inner: Vec::new(),
    };
    for v in outputs {
        p.walk(v, "", "", 0);
    }
    // PyTensor's layout: each node with an inner graph again, its inner outputs under ` ← `.
    if !p.inner.is_empty() {
        p.out.push_str("\nInner graphs:\n");
    }
    let mut k = 0;
    while k < p.inner.len() {
        let v = p.inner[k].clone();
        k += 1;
        let (text, _) = p.head(&v);
        let _ = writeln!(p.out, "\n{text}");
        match v.owner() {
            Some((
                Op::Composite(g) | Op::FusedReduce { body: g, .. } | Op::FusedMatMul { body: g },
                _,
            )) => {
                for o in g.outputs() {
                    p.walk(o, "", " ← ", 0);
                }
            }
            Some((Op::Scan(s), _)) => {
                for out in s.body.outputs() {
                    p.walk(out, "", " ← ", 0);
                }
            }
            Some((Op::OpFromGraph(o), _)) => {
                for out in o.body.outputs() {
                    p.walk(out, "", " ← ", 0);
                }
            }
            Some((Op::IfElse(b), _)) => {
                for (label, branch) in [("then", &b.then_branch), ("else", &b.else_branch)] {
                    let _ = writeln!(p.out, " {label}:");
                    for out in branch.outputs() {
                        p.walk(out, "", " ← ", 0);
                    }
                }
            }
            _ => {}
        }
    }
    p.out
}

#[cfg(test)]
mod tests {
    #[test]
    fn labels_follow_pytensor() {
        assert_eq!(super::label(0), "A");
        assert_eq!(super::label(25), "Z");
        assert_eq!(super::label(26), "BA");
    }
}
