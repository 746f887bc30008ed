//! The integration tests of `oxtensor-runtime`: each file of this directory is one module of this one
//! binary (cargo's discovery of test files is off in Cargo.toml, as one binary per file cost
//! minutes of compiling and linking in CI), and the directories are support modules they share.

mod elemwise_support;
mod layout_index_support;
mod strided_support;

mod composite_reduce;
mod elemwise;
mod elemwise_cases;
mod in_place_draws;
mod in_place_extra;
mod in_place_linalg;
mod index;
mod inner_bodies;
mod inplace;
mod layout;
mod matmul;
mod matmul_skinny;
mod reduce;
mod try_lock;

/// A new test file that is not declared above would never be compiled or run.
#[test]
fn every_test_file_is_a_module() {
    oxtensor_testkit::assert_test_files_declared(
        concat!(env!("CARGO_MANIFEST_DIR"), "/tests"),
        include_str!("main.rs"),
    );
}
