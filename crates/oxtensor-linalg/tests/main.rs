//! The integration tests of `oxtensor-linalg`: each file of this directory is one module of this one
//! binary (cargo's discovery of test files is off in Cargo.toml, as one binary per file cost
//! minutes of compiling and linking in CI), and the directories are support modules they share.

mod common;

mod properties;
mod scipy_fixtures;
mod spectra;
mod structured;
mod svd_vectors;

/// A new test file that is not declared above would never be compiled or run.
#[test]
fn every_test_file_is_a_module() {
    oxtensor_testkit::assert_test_files_declared(
        concat!(env!("CARGO_MANIFEST_DIR"), "/tests"),
        include_str!("main.rs"),
    );
}
