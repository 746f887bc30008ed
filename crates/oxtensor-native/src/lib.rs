//! The native backend of oxtensor: function graphs compiled to C by the system compiler,
//! loaded in process, cached on disk.
//!
//! [`NativeBackend`] implements [`oxtensor_runtime::Backend`]. Compiling a graph:
//!
//! 1. **Lowering** decides which nodes become C kernels: every `Elemwise` and `Composite`
//!    node (a Composite's inner scalar program is inlined into one loop body), every
//!    `Reduce` (sum, prod, max, min, all, any over any axes), and every `FusedReduce` (the
//!    fusion pass's decision that a reduction computes its elementwise program inside its
//!    loop). A `FusedMatMul`'s epilogue program gets a loop too, which the executor runs in
//!    place on panels of the product the interpreter's `matmul_panels` computes.
//!    Nodes whose inputs are statically tiny run on the interpreter and get no C.
//! 2. **Code generation** writes, per kernel, only what differs between kernels: a vectorised
//!    loop over one block of unit-stride operands (equal kernels emitted once). Shared
//!    drivers walk the strided space run by run and hand each block its operands (the data
//!    itself, or a small buffer for broadcast and strided operands; an output may be written
//!    exactly over an input); reductions keep several accumulators and combine blocks
//!    pairwise, through a monoid per op and dtype.
//! 3. **Compiling** runs `$OXTENSOR_CXX`/`$CC`/`cc` with `-O2 -march=native` and the
//!    vectoriser, math functions declared SIMD so GCC calls glibc's libmvec, through a
//!    content-addressed [`Cache`]. The drivers and monoids are compiled once per compiler
//!    and flags into objects the cache keeps, and linked into each function's library; a
//!    function's own code compiles in parallel with any object not cached yet (and in two
//!    translation units when it has many kernels).
//! 4. **Running**: a Rust executor walks the runtime's `Plan`; per node it checks shapes,
//!    allocates outputs and calls the node's kernel (large calls split across rayon's
//!    threads by output range), or calls the interpreter's `eval_node` for every other node
//!    and every case the kernels do not take. Numbers equal the interpreter's: exactly for
//!    integers and bools, within a few ulp for floats.
//!
//! The design choice of a Rust executor (rather than generated C calling back into Rust for
//! the ops it does not implement) keeps all allocation, shape checking, error reporting and
//! threading in Rust, and each C function a pure loop over memory it is handed. The one
//! exception is a whole loop whose step holds linear algebra: it calls Rust back for those
//! nodes (`staged_host`), with their shapes laid out and checked before the loop. See
//! `docs/native-backend.md`.

mod backend;
mod bind;
pub mod cache;
mod compile;
mod config;
mod emit;
mod epilogue;
mod error;
mod exec;
mod lower;
mod recurrence;
mod replay;
mod staged;
mod staged_host;
mod staged_index;
mod staged_shapes;
mod walk;

pub use backend::{CompileInfo, NativeBackend};
pub use cache::{Cache, CacheEntry, Lookup};
pub use compile::Compiler;
pub use config::{DEFAULT_CACHE_MAX_BYTES, NativeConfig};
pub use error::NativeError;
pub use exec::NativeExecutable;
