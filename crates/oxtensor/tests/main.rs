//! The integration tests of `oxtensor`: each file of this directory is one module of this one
//! binary (cargo's discovery of test files is off in Cargo.toml, as one binary per file cost
//! minutes of compiling and linking in CI), and the directories are support modules they share.

mod both_backends;
mod gradient_common;
mod random_common;
mod random_graphs;

mod branch_rewrites;
mod call_into;
mod complex;
mod composite;
mod einsum;
mod extra_ops;
mod function;
mod fusion;
mod gradient_higher;
mod gradient_ops;
mod gradient_scalar_ops;
mod gradient_semantics;
mod gradient_verify;
mod inner_graphs;
mod linalg;
mod matmul_epilogue;
mod memory;
mod profile;
mod raise_op;
mod random;
mod random_errors;
mod random_more;
mod rewrite_modes;
mod scan;
mod scan_rewrites;
mod special_functions;
mod special_param_grads;

/// A new test file that is not declared above would never be compiled or run.
#[test]
fn every_test_file_is_a_module() {
    oxtensor_testkit::assert_test_files_declared(
        concat!(env!("CARGO_MANIFEST_DIR"), "/tests"),
        include_str!("main.rs"),
    );
}
