//! The integration tests of `oxtensor-native`: each file of this directory is one module of this one
//! binary (cargo's discovery of test files is off in Cargo.toml, as one binary per file cost
//! minutes of compiling and linking in CI), and the directories are support modules they share.

mod common;

mod cache;
mod elemwise;
mod facade;
mod fused;
mod loops;
mod reduce;
mod replay;
mod soundness;
mod staged_branch;
mod staged_host;
mod staged_loops;
mod staged_models;
mod staged_nested;
mod staged_ops;
mod staged_random;
mod staged_stages;
mod staged_take;
mod targets;

/// A new test file that is not declared above would never be compiled or run.
#[test]
fn every_test_file_is_a_module() {
    oxtensor_testkit::assert_test_files_declared(
        concat!(env!("CARGO_MANIFEST_DIR"), "/tests"),
        include_str!("main.rs"),
    );
}
