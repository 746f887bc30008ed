//! The driver and the pipeline: fixpoints, limits and stop reasons, hit counts, rejected
//! replacements, deep and large graphs, rule selection by tags, and dumps.

use crate::common::*;
use oxtensor_data::DType;
use oxtensor_graph::build as b;
use oxtensor_graph::{ScalarOp, Var, toposort};
use oxtensor_rewrite::pattern::{apply, unary};
use oxtensor_rewrite::{
    Limits, Optimizer, PIPELINE, Pass, Root, Rule, RuleCtx, StopReason, apply_rules,
};
use std::time::Duration;

// sin(x) → cos(x)   (a test rule; with its inverse below it cycles)
fn sin_to_cos(v: &Var, _: &RuleCtx<'_>) -> Option<Var> {
    apply(
        ScalarOp::Cos,
        std::slice::from_ref(unary(v, ScalarOp::Sin)?),
    )
}

// cos(x) → sin(x)
fn cos_to_sin(v: &Var, _: &RuleCtx<'_>) -> Option<Var> {
    apply(
        ScalarOp::Sin,
        std::slice::from_ref(unary(v, ScalarOp::Cos)?),
    )
}

// sin(x) → float32(x)   (a wrong rule: another dtype)
fn sin_to_f32(v: &Var, _: &RuleCtx<'_>) -> Option<Var> {
    b::cast(unary(v, ScalarOp::Sin)?, DType::F32).ok()
}

// sin(x) → ones(1)   (a wrong rule: turns an unknown extent into a broadcasting 1)
fn sin_to_one(v: &Var, _: &RuleCtx<'_>) -> Option<Var> {
    unary(v, ScalarOp::Sin)?;
    oxtensor_rewrite::pattern::scalar_like(1.0, v.dtype(), v.ndim())
}

const SIN_TO_COS: Rule = Rule::new("sin_to_cos", Root::Elemwise(ScalarOp::Sin), sin_to_cos);
const COS_TO_SIN: Rule = Rule::new("cos_to_sin", Root::Elemwise(ScalarOp::Cos), cos_to_sin);
const WRONG: [Rule; 2] = [
    Rule::new("sin_to_f32", Root::Elemwise(ScalarOp::Sin), sin_to_f32),
    Rule::new("sin_to_one", Root::Elemwise(ScalarOp::Sin), sin_to_one),
];

fn sin_chain(x: &Var, n: usize) -> Var {
    (0..n).fold(x.clone(), |acc, _| acc.sin())
}

fn count(out: &Var, op: ScalarOp) -> usize {
    toposort(std::slice::from_ref(out))
        .iter()
        .filter(|n| n.op() == Some(&oxtensor_graph::Op::Elemwise(op)))
        .count()
}

#[test]
fn one_sweep_rewrites_a_chain_and_the_next_confirms_the_fixpoint() {
    let x = vector("x");
    let y = sin_chain(&x, 10);
    let (out, stats) = apply_rules("t", &[y], &[&SIN_TO_COS], &Limits::DEFAULT).unwrap();
    assert_eq!(stats.stop, StopReason::Fixpoint);
    assert_eq!(stats.sweeps, 2);
    assert_eq!(stats.hits.get("sin_to_cos"), Some(&10));
    assert_eq!((stats.nodes_before, stats.nodes_after), (10, 10));
    assert_eq!(count(&out[0], ScalarOp::Cos), 10);
}

#[test]
fn a_cycle_is_broken_within_a_sweep_and_stopped_by_the_sweep_limit() {
    let x = vector("x");
    let limits = Limits {
        max_sweeps: 5,
        ..Limits::DEFAULT
    };
    let (out, stats) = apply_rules("t", &[x.sin()], &[&SIN_TO_COS, &COS_TO_SIN], &limits).unwrap();
    assert_eq!(stats.stop, StopReason::SweepLimit);
    assert_eq!(stats.sweeps, 5);
    assert_eq!(stats.hits.get("sin_to_cos"), Some(&3));
    assert_eq!(stats.hits.get("cos_to_sin"), Some(&2));
    assert_same(&out[0], &x.cos());
}

#[test]
fn the_rewrite_limit_stops_mid_sweep_with_a_valid_graph() {
    let x = vector("x");
    let limits = Limits {
        max_rewrites: 3,
        ..Limits::DEFAULT
    };
    let (out, stats) = apply_rules("t", &[sin_chain(&x, 10)], &[&SIN_TO_COS], &limits).unwrap();
    assert_eq!(stats.stop, StopReason::RewriteLimit);
    assert_eq!(stats.hits.get("sin_to_cos"), Some(&3));
    assert_eq!(
        (count(&out[0], ScalarOp::Cos), count(&out[0], ScalarOp::Sin)),
        (3, 7)
    );
    oxtensor_graph::verify(&out).unwrap();
}

#[test]
fn time_and_node_limits() {
    let x = vector("x");
    let y = sin_chain(&x, 10);
    let no_time = Limits {
        max_time: Duration::ZERO,
        ..Limits::DEFAULT
    };
    let (out, stats) =
        apply_rules("t", std::slice::from_ref(&y), &[&SIN_TO_COS], &no_time).unwrap();
    assert_eq!((stats.stop, stats.sweeps), (StopReason::TimeLimit, 0));
    assert_same(&out[0], &y);
    let few_nodes = Limits {
        max_nodes: 5,
        ..Limits::DEFAULT
    };
    let (out, stats) =
        apply_rules("t", std::slice::from_ref(&y), &[&SIN_TO_COS], &few_nodes).unwrap();
    assert_eq!(stats.stop, StopReason::NodeLimit);
    assert_same(&out[0], &y);
}

#[test]
fn replacements_of_another_type_are_rejected_and_counted() {
    let x = vector("x");
    let y = x.sin();
    let rules: Vec<&Rule> = WRONG.iter().collect();
    let (out, stats) =
        apply_rules("t", std::slice::from_ref(&y), &rules, &Limits::DEFAULT).unwrap();
    assert_same(&out[0], &y);
    assert_eq!(stats.rejected.get("sin_to_f32"), Some(&1));
    assert_eq!(stats.rejected.get("sin_to_one"), Some(&1));
    assert_eq!(stats.total_hits(), 0);
}

#[test]
fn hits_are_counted_per_rule_across_passes() {
    let x = vector("x");
    let y = ((&x + 0.0) * 1.0).exp().log();
    let (out, report) = optimize(&[y], &Optimizer::FAST_RUN);
    assert_same(&out[0], &x);
    assert_eq!(report.hits("add_zero"), 1);
    assert_eq!(report.hits("mul_one"), 1);
    assert_eq!(report.hits("log_exp"), 1);
    // The two rank-padded constants (`DimShuffle{x}(0.0)`, `DimShuffle{x}(1.0)`) fold first.
    assert_eq!(report.hits("constant_folding"), 2);
    assert_eq!(report.total_hits(), 5);
    let useless = report.pass("useless").unwrap();
    assert_eq!(useless.stats.stop, StopReason::Fixpoint);
    assert!(report.to_string().contains("add_zero: 1"), "{report}");
}

#[test]
fn deep_graphs_do_not_overflow_the_stack() {
    let x = vector("x");
    let mut y = x.clone();
    for _ in 0..50_000 {
        y = &y.sin() + 0.0;
    }
    let (out, report) = optimize(&[y], &Optimizer::FAST_RUN.excluding(&["fusion"]));
    assert_eq!(report.hits("add_zero"), 50_000);
    assert_eq!(count(&out[0], ScalarOp::Add), 0);
    assert_eq!(count(&out[0], ScalarOp::Sin), 50_000);
}

/// A graph of about `n` nodes mixing patterns of every pass.
fn mixed_graph(n: usize) -> (Var, Var) {
    let (x, w) = (vector("x"), vector("w"));
    let mut acc = x.clone();
    let mut i = 0;
    while i % 64 != 0 || toposort(std::slice::from_ref(&acc)).len() < n {
        let t = ((&acc * 1.0 + 0.0).exp() - 1.0) * &w;
        let u = (1.0 + t.exp()).log() + x.powf(2.0);
        acc = (-(-&u)) / 3.0 + (&u - 2.0).sigmoid();
        i += 1;
    }
    (x, acc)
}

#[test]
fn ten_thousand_nodes_rewrite_in_two_sweeps_per_pass() {
    let (_, y) = mixed_graph(10_000);
    let (_, report) = optimize(&[y], &Optimizer::FAST_RUN);
    assert!(report.total_hits() > 5_000, "{report}");
    // Every pass reaches its fixpoint in at most two sweeps over the 10,000 nodes (one that
    // rewrites, one that finds nothing left), and fusion ends with one node: work linear in
    // the graph. How fast that is, the release benchmark measures
    // (`cargo run --release -p oxtensor-bench --bin rewrite`), never a test.
    assert!(
        report.passes.iter().all(|p| p.stats.sweeps <= 2),
        "{report}"
    );
    assert_eq!(
        report.pass("fusion").map(|p| p.stats.nodes_after),
        Some(1),
        "{report}"
    );
}

#[test]
fn rules_are_selected_by_tags() {
    let stabilize = PIPELINE.iter().find(|p| p.name == "stabilize").unwrap();
    let names = |o: &Optimizer, p: &Pass| -> Vec<&str> {
        o.selected_rules(p).iter().map(|r| r.name).collect()
    };
    let all = names(&Optimizer::FAST_RUN, stabilize);
    assert!(all.contains(&"log1p_from_log") && all.contains(&"constant_folding"));
    // A rule name is a tag.
    let no_log1p = names(
        &Optimizer::FAST_RUN.excluding(&["log1p_from_log"]),
        stabilize,
    );
    assert_eq!(no_log1p.len(), all.len() - 1);
    // Requiring keeps only rules with every required tag.
    let unsafe_only = Optimizer::FAST_RUN.requiring(&["nan_unsafe"]);
    assert_eq!(
        names(&unsafe_only, stabilize),
        ["mul_zero", "sub_self", "div_cancel", "distribute_div"]
    );
    // FAST_COMPILE runs the useless pass only, without nan_unsafe rules; including them again
    // brings them back.
    let ran = |o: &Optimizer| -> Vec<&str> {
        let x = vector("x");
        let (_, r) = optimize(&[(&x * 0.0).exp()], o);
        r.passes.iter().map(|p| p.name).collect()
    };
    assert_eq!(ran(&Optimizer::FAST_COMPILE), ["useless"]);
    let useless = &PIPELINE[0];
    assert!(!names(&Optimizer::FAST_COMPILE, useless).contains(&"mul_zero"));
    let with = Optimizer::FAST_COMPILE.including(&["nan_unsafe"]);
    assert!(names(&with, useless).contains(&"mul_zero"));
    assert!(ran(&Optimizer::NONE).is_empty());
    assert_eq!(
        ran(&Optimizer::FAST_RUN),
        [
            "useless",
            "canonicalize",
            "stabilize",
            "specialize",
            "merge_branches",
            "merge_scans",
            "scan_last_only",
            "fusion"
        ]
    );
}

#[test]
fn dumps_before_and_after_a_named_pass() {
    let x = vector("x");
    let y = (1.0 + &x).log();
    let (_, report) = optimize(&[y], &Optimizer::FAST_RUN.dumping(&["stabilize"]));
    let dump = report
        .pass("stabilize")
        .and_then(|p| p.dump.clone())
        .unwrap();
    assert!(
        dump.before.contains("Log [id") && dump.after.contains("Log1p"),
        "{dump:?}"
    );
    assert!(report.pass("canonicalize").unwrap().dump.is_none());
}

#[test]
fn the_fusion_dump_shows_fused_reductions() {
    let x = vector("x");
    let y = (&x * &x).exp().sum(None);
    let (_, report) = optimize(&[y], &Optimizer::FAST_RUN.dumping(&["fusion"]));
    let dump = report.pass("fusion").and_then(|p| p.dump.clone()).unwrap();
    assert!(dump.before.starts_with("Sum{axes=(0)} [id"), "{dump:?}");
    assert!(
        dump.after.starts_with("Sum{axes=(0), of=exp(sqr(i0))} [id"),
        "{dump:?}"
    );
    assert!(dump.after.contains("Inner graphs:"), "{dump:?}");
}

/// Run by `dump_env_var_prints_to_stderr` in a child process with `OXTENSOR_DUMP_PASS` set.
#[test]
#[ignore = "run as a child process by dump_env_var_prints_to_stderr"]
fn dump_child() {
    let x = vector("x");
    optimize(&[(1.0 + &x).log()], &Optimizer::FAST_RUN);
}

#[test]
fn dump_env_var_prints_to_stderr() {
    let exe = std::env::current_exe().unwrap();
    let out = std::process::Command::new(exe)
        .args(["--exact", "driver::dump_child", "--ignored", "--nocapture"])
        .env("OXTENSOR_DUMP_PASS", "stabilize")
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{err}");
    assert!(err.contains("== before pass 'stabilize' =="), "{err}");
    assert!(err.contains("Log1p"), "{err}");
    assert!(!err.contains("pass 'canonicalize'"), "{err}");
}
