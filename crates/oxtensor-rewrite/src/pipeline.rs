//! The pass pipeline and the selection of rules by tags (what a mode's optimizer is).

use crate::bodies::in_bodies;
use crate::driver::{Limits, PassStats, apply_rules};
use crate::rules::{
    ALGEBRA, BRANCHES, EINSUM, FOLD, LAYOUT, LINALG, LOOPS, LOWER_RANK, PRODUCTS, SHAPE, SIGMOID,
    SPECIALIZE, STABILIZE, USELESS, fuse, merge_branches, merge_scans, scan_last_only,
};
use crate::{RewriteError, Rule, RuleSet};
use oxtensor_graph::{FunctionGraph, PrintOptions, Var, debugprint, verify};
use std::borrow::Cow;
use std::fmt;
use std::time::{Duration, Instant};

/// A whole-graph pass: the new outputs of the graph of `outputs`, in order, and what it did.
pub type GraphPass = fn(&[Var]) -> Result<(Vec<Var>, PassStats), RewriteError>;

/// A named pass: rule sets run together to a fixpoint, or a whole-graph function, and the
/// pass's tags.
#[derive(Clone, Copy, Debug)]
pub struct Pass {
    /// The name (reports, dumps, `OXTENSOR_DUMP_PASS`, and a tag of every rule in the pass).
    pub name: &'static str,
    /// Tags every rule of the pass carries in addition to its own.
    pub tags: &'static [&'static str],
    /// The rule sets, in priority order: at each node the first matching rule wins.
    pub rule_sets: &'static [RuleSet],
    /// A whole-graph pass run after the rule sets (fusion), when the optimizer selects the
    /// pass by its name or tags ([`Optimizer::selects_pass`]); it runs inside every inner graph
    /// too (loop steps, branches, subroutine bodies), innermost first.
    pub graph_pass: Option<GraphPass>,
}

/// The pipeline, in order. Constant folding and the useless-operation rules run in every pass,
/// because each pass creates new opportunities for them.
///
/// | pass | tags | rule sets |
/// |---|---|---|
/// | `useless` | `fast_run`, `fast_compile` | constant_folding, useless |
/// | `canonicalize` | `fast_run` | constant_folding, useless, einsum, algebra, products, layout, shape, branches, loops |
/// | `stabilize` | `fast_run` | constant_folding, useless, stabilize, sigmoid, products, linalg |
/// | `specialize` | `fast_run` | constant_folding, useless, einsum, specialize, lower_rank, branches, loops |
/// | `merge_branches` | `fast_run` | the whole-graph [`merge_branches`](crate::rules::merge_branches) |
/// | `merge_scans` | `fast_run` | the whole-graph [`merge_scans`](crate::rules::merge_scans) |
/// | `scan_last_only` | `fast_run` | the whole-graph [`scan_last_only`](crate::rules::scan_last_only) |
/// | `fusion` | `fast_run` | the whole-graph [`fuse`](crate::rules::fuse) |
///
/// A rule's tags are the pass's tags and name, its set's name, its own name and its own tags:
/// `nan_unsafe` (`x * 0`, `x - x`, cancelling `x / x`) and `shape_unsafe` (shapes read from
/// inputs, allocations assumed to match). `products` runs in `canonicalize` and again in
/// `stabilize`, where the `sigmoid` rules create factors that cancel. `einsum` runs in
/// `canonicalize` (an einsum whose shapes are static by then is planned before the algebra
/// sees its products) and again in `specialize` (shapes that rewrites made static). Fusion runs
/// last, so the nodes it freezes into Composites are already rewritten.
pub const PIPELINE: &[Pass] = &[
    Pass {
        name: "useless",
        tags: &["fast_run", "fast_compile"],
        rule_sets: &[FOLD, USELESS],
        graph_pass: None,
    },
    Pass {
        name: "canonicalize",
        tags: &["fast_run"],
        rule_sets: &[
            FOLD, USELESS, EINSUM, ALGEBRA, PRODUCTS, LAYOUT, SHAPE, BRANCHES, LOOPS,
        ],
        graph_pass: None,
    },
    Pass {
        name: "stabilize",
        tags: &["fast_run"],
        rule_sets: &[FOLD, USELESS, STABILIZE, SIGMOID, PRODUCTS, LINALG],
        graph_pass: None,
    },
    Pass {
        name: "specialize",
        tags: &["fast_run"],
        rule_sets: &[
            FOLD, USELESS, EINSUM, SPECIALIZE, LOWER_RANK, BRANCHES, LOOPS,
        ],
        graph_pass: None,
    },
    Pass {
        name: "merge_branches",
        tags: &["fast_run"],
        rule_sets: &[],
        graph_pass: Some(merge_branches),
    },
    Pass {
        name: "merge_scans",
        tags: &["fast_run"],
        rule_sets: &[],
        graph_pass: Some(merge_scans),
    },
    Pass {
        name: "scan_last_only",
        tags: &["fast_run"],
        rule_sets: &[],
        graph_pass: Some(scan_last_only),
    },
    Pass {
        name: "fusion",
        tags: &["fast_run"],
        rule_sets: &[],
        graph_pass: Some(fuse),
    },
];

/// A list of tags (a `Cow` so that the predefined optimizers are constants).
pub type Tags = Cow<'static, [Cow<'static, str>]>;

fn add(tags: &Tags, extra: &[&str]) -> Tags {
    let mut list = tags.to_vec();
    for &t in extra {
        if !list.iter().any(|x| x == t) {
            list.push(Cow::Owned(t.to_string()));
        }
    }
    Cow::Owned(list)
}

fn remove(tags: &Tags, gone: &[&str]) -> Tags {
    Cow::Owned(
        tags.iter()
            .filter(|t| !gone.contains(&t.as_ref()))
            .cloned()
            .collect(),
    )
}

/// Which rules of which pipeline run, and within which limits: the rewriting half of a mode.
///
/// Selection works on tags, as PyTensor's `OptimizationQuery`: a rule's tags are its own, its
/// set's name, its pass's tags, and the names of the rule and the pass; it runs when it has at
/// least one included tag, no excluded tag, and every required tag.
#[derive(Clone, Debug)]
pub struct Optimizer {
    include: Tags,
    exclude: Tags,
    require: Tags,
    dump: Tags,
    pipeline: &'static [Pass],
    limits: Limits,
}

impl Optimizer {
    /// Every rewrite of the pipeline (the `fast_run` tag), `nan_unsafe` ones included as in
    /// PyTensor.
    pub const FAST_RUN: Optimizer = Optimizer {
        include: Cow::Borrowed(&[Cow::Borrowed("fast_run")]),
        exclude: Cow::Borrowed(&[]),
        require: Cow::Borrowed(&[]),
        dump: Cow::Borrowed(&[]),
        pipeline: PIPELINE,
        limits: Limits::DEFAULT,
    };

    /// Only the cheap `useless` pass with constant folding (the `fast_compile` tag), without
    /// `nan_unsafe` rules.
    pub const FAST_COMPILE: Optimizer = Optimizer {
        include: Cow::Borrowed(&[Cow::Borrowed("fast_compile")]),
        exclude: Cow::Borrowed(&[Cow::Borrowed("nan_unsafe")]),
        require: Cow::Borrowed(&[]),
        dump: Cow::Borrowed(&[]),
        pipeline: PIPELINE,
        limits: Limits::DEFAULT,
    };

    /// No rewrites at all (PyTensor's `optimizer=None`).
    pub const NONE: Optimizer = Optimizer {
        include: Cow::Borrowed(&[]),
        exclude: Cow::Borrowed(&[]),
        require: Cow::Borrowed(&[]),
        dump: Cow::Borrowed(&[]),
        pipeline: PIPELINE,
        limits: Limits::DEFAULT,
    };

    /// An optimizer by PyTensor name: `"fast_run"`, `"fast_compile"`, `"None"` (also accepted
    /// in upper case, and `"default"` for `fast_run`).
    pub fn by_name(name: &str) -> Option<Optimizer> {
        match name.to_ascii_lowercase().as_str() {
            "fast_run" | "default" => Some(Optimizer::FAST_RUN),
            "fast_compile" => Some(Optimizer::FAST_COMPILE),
            "none" | "" => Some(Optimizer::NONE),
            _ => None,
        }
    }

    /// Also runs the rules with any of these tags (and no longer excludes them).
    pub fn including(&self, tags: &[&str]) -> Optimizer {
        Optimizer {
            include: add(&self.include, tags),
            exclude: remove(&self.exclude, tags),
            ..self.clone()
        }
    }

    /// Drops the rules with any of these tags (a pass name or a rule name is a tag too).
    pub fn excluding(&self, tags: &[&str]) -> Optimizer {
        Optimizer {
            exclude: add(&self.exclude, tags),
            ..self.clone()
        }
    }

    /// Keeps only the rules that have all of these tags.
    pub fn requiring(&self, tags: &[&str]) -> Optimizer {
        Optimizer {
            require: add(&self.require, tags),
            ..self.clone()
        }
    }

    /// Keeps the graph printed before and after each named pass (`"all"`: every pass) in the
    /// report. The environment variable `OXTENSOR_DUMP_PASS` (same syntax, comma-separated)
    /// prints them to stderr instead, whatever the optimizer says.
    pub fn dumping(&self, passes: &[&str]) -> Optimizer {
        Optimizer {
            dump: add(&self.dump, passes),
            ..self.clone()
        }
    }

    /// The same selection over another pipeline (for custom rule sets and tests).
    pub fn with_pipeline(&self, pipeline: &'static [Pass]) -> Optimizer {
        Optimizer {
            pipeline,
            ..self.clone()
        }
    }

    /// The same selection within other limits.
    pub fn with_limits(&self, limits: Limits) -> Optimizer {
        Optimizer {
            limits,
            ..self.clone()
        }
    }

    /// The limits of each pass.
    pub fn limits(&self) -> &Limits {
        &self.limits
    }

    /// The pipeline the optimizer selects from.
    pub fn pipeline(&self) -> &'static [Pass] {
        self.pipeline
    }

    /// True when `rule`, of `set`, run in `pass`, is selected.
    pub fn selects(&self, pass: &Pass, set: &RuleSet, rule: &Rule) -> bool {
        let tagged = |t: &str| {
            t == pass.name
                || t == set.name
                || t == rule.name
                || pass.tags.contains(&t)
                || rule.tags.contains(&t)
        };
        self.include.iter().any(|t| tagged(t))
            && !self.exclude.iter().any(|t| tagged(t))
            && self.require.iter().all(|t| tagged(t))
    }

    /// True when the whole-graph part of `pass` runs: the pass's name or one of its tags is
    /// included, none is excluded, and every required tag is among them.
    pub fn selects_pass(&self, pass: &Pass) -> bool {
        let tagged = |t: &str| t == pass.name || pass.tags.contains(&t);
        pass.graph_pass.is_some()
            && self.include.iter().any(|t| tagged(t))
            && !self.exclude.iter().any(|t| tagged(t))
            && self.require.iter().all(|t| tagged(t))
    }

    /// The selected rules of `pass`, in priority order (a rule listed in two of its sets runs
    /// once).
    pub fn selected_rules(&self, pass: &Pass) -> Vec<&'static Rule> {
        let mut rules: Vec<&'static Rule> = Vec::new();
        for set in pass.rule_sets {
            for rule in set.rules {
                if self.selects(pass, set, rule) && !rules.iter().any(|r| r.name == rule.name) {
                    rules.push(rule);
                }
            }
        }
        rules
    }
}

impl Default for Optimizer {
    fn default() -> Optimizer {
        Optimizer::FAST_RUN
    }
}

/// The graph before and after a pass, as `debugprint` renders it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PassDump {
    /// Before the pass.
    pub before: String,
    /// After the pass.
    pub after: String,
}

/// What one pass of a rewrite did.
#[derive(Clone, Debug)]
pub struct PassReport {
    /// The pass.
    pub name: &'static str,
    /// How many rules were selected in it.
    pub rules: usize,
    /// Sweeps, stop reason, hits and rejections per rule, graph size.
    pub stats: PassStats,
    /// Wall time.
    pub elapsed: Duration,
    /// The graph before and after, when the optimizer asked for it ([`Optimizer::dumping`]).
    pub dump: Option<PassDump>,
}

/// What a rewrite did: one report per pass that ran (passes with no selected rule are skipped).
#[derive(Clone, Debug, Default)]
pub struct RewriteReport {
    /// The passes, in pipeline order.
    pub passes: Vec<PassReport>,
    /// Total wall time.
    pub elapsed: Duration,
}

impl RewriteReport {
    /// The report of the named pass, if it ran.
    pub fn pass(&self, name: &str) -> Option<&PassReport> {
        self.passes.iter().find(|p| p.name == name)
    }

    /// Hits of the named rule, summed over passes.
    pub fn hits(&self, rule: &str) -> usize {
        self.passes
            .iter()
            .filter_map(|p| p.stats.hits.get(rule))
            .sum()
    }

    /// Hits of all rules in all passes.
    pub fn total_hits(&self) -> usize {
        self.passes.iter().map(|p| p.stats.total_hits()).sum()
    }
}

impl fmt::Display for RewriteReport {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for p in &self.passes {
            let s = &p.stats;
            writeln!(
                f,
                "{}: {} rules, {} sweeps, {:?}, {} → {} nodes, {:.3} ms",
                p.name,
                p.rules,
                s.sweeps,
                s.stop,
                s.nodes_before,
                s.nodes_after,
                p.elapsed.as_secs_f64() * 1e3
            )?;
            for (rule, n) in &s.hits {
                writeln!(f, "    {rule}: {n}")?;
            }
            for (rule, n) in &s.rejected {
                writeln!(f, "    {rule}: {n} rejected")?;
            }
        }
        Ok(())
    }
}

/// True when `list` (comma-separated pass names, or `all`) names `pass`.
fn names(list: &str, pass: &str) -> bool {
    list.split(',')
        .map(str::trim)
        .any(|n| n == pass || n == "all")
}

/// Rewrites `graph` with the passes `optimizer` selects; returns the new graph over the same
/// inputs, and the report.
pub fn rewrite(
    graph: &FunctionGraph,
    optimizer: &Optimizer,
) -> Result<(FunctionGraph, RewriteReport), RewriteError> {
    let (outputs, report) = rewrite_outputs(graph.outputs(), optimizer)?;
    let rewritten = FunctionGraph::new(graph.inputs().to_vec(), outputs)
        .map_err(RewriteError::Graph)?
        .with_consumed(graph.consumed().iter().cloned());
    Ok((rewritten, report))
}

/// Rewrites the graph of `outputs`; returns the new outputs, in order, and the report. In debug
/// builds the graph is verified after every pass.
pub fn rewrite_outputs(
    outputs: &[Var],
    optimizer: &Optimizer,
) -> Result<(Vec<Var>, RewriteReport), RewriteError> {
    let start = Instant::now();
    let to_stderr = std::env::var("OXTENSOR_DUMP_PASS").ok();
    let mut outputs = outputs.to_vec();
    let mut passes = Vec::new();
    for pass in optimizer.pipeline {
        let rules = optimizer.selected_rules(pass);
        let graph_pass = pass.graph_pass.filter(|_| optimizer.selects_pass(pass));
        if rules.is_empty() && graph_pass.is_none() {
            continue;
        }
        let print = to_stderr.as_deref().is_some_and(|l| names(l, pass.name));
        let keep = optimizer.dump.iter().any(|l| names(l, pass.name));
        let render = |o: &[Var]| debugprint(o, PrintOptions::default());
        let before = (print || keep).then(|| render(&outputs));
        let t = Instant::now();
        let (new_outputs, mut stats) = if rules.is_empty() {
            (outputs, None)
        } else {
            let (o, s) = apply_rules(pass.name, &outputs, &rules, &optimizer.limits)?;
            (o, Some(s))
        };
        outputs = new_outputs;
        if let Some(run) = graph_pass {
            let (o, s) = in_bodies(run, &outputs)?;
            outputs = o;
            stats = Some(match stats {
                Some(mut before) => {
                    before.hits.extend(s.hits);
                    before.nodes_after = s.nodes_after;
                    before
                }
                None => s,
            });
        }
        let Some(stats) = stats else { continue };
        let elapsed = t.elapsed();
        if cfg!(debug_assertions) {
            verify(&outputs).map_err(|source| RewriteError::Verify {
                pass: pass.name,
                source,
            })?;
        }
        let dump = before.map(|before| PassDump {
            before,
            after: render(&outputs),
        });
        if print && let Some(d) = &dump {
            eprintln!(
                "== before pass '{}' ==\n{}== after pass '{}' ({:?}, {} rewrites) ==\n{}",
                pass.name,
                d.before,
                pass.name,
                stats.stop,
                stats.total_hits(),
                d.after
            );
        }
        passes.push(PassReport {
            name: pass.name,
            rules: rules.len(),
            stats,
            elapsed,
            dump: dump.filter(|_| keep),
        });
    }
    Ok((
        outputs,
        RewriteReport {
            passes,
            elapsed: start.elapsed(),
        },
    ))
}
