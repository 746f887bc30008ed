//! Tests of the rewrite engine, the pipeline and every rule set. Each rule's test builds an
//! input graph, checks the rewritten graph is the expected one (the same interned variable),
//! and checks both give equal values through the interpreter.

mod canonicalize;
mod common;
mod driver;
mod linalg;
mod products;
mod properties;
mod sigmoid;
mod specialize;
mod stabilize;
mod useless;
