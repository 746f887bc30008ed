//! Properties of gradients of random graphs (proptest): every gradient is built, has its
//! variable's type, and the gradient graph stays linear in the size of the graph.

use oxtensor_data::DType;
use oxtensor_grad::{DisconnectedInputs, GradOptions, grad, pushforward};
use oxtensor_graph::build as b;
use oxtensor_graph::{ScalarOp, TensorType, Var, toposort};
use proptest::prelude::*;

const UNARY: [ScalarOp; 8] = [
    ScalarOp::Exp,
    ScalarOp::Sin,
    ScalarOp::Tanh,
    ScalarOp::Sqr,
    ScalarOp::Neg,
    ScalarOp::Abs,
    ScalarOp::Sigmoid,
    ScalarOp::Softplus,
];

const BINARY: [ScalarOp; 6] = [
    ScalarOp::Add,
    ScalarOp::Mul,
    ScalarOp::Sub,
    ScalarOp::Maximum,
    ScalarOp::TrueDiv,
    ScalarOp::Arctan2,
];

/// Builds a random DAG over a matrix `x` and a row `y` (broadcast), from `steps` of
/// `(kind, op, a, b)`: each step applies a unary or binary op, or a reduction, to earlier
/// values picked by index.
fn build(steps: &[(u8, usize, usize, usize)]) -> (Vec<Var>, Var) {
    let x = Var::input(Some("x"), TensorType::new(DType::F64, &[None, None]));
    let y = Var::input(Some("y"), TensorType::new(DType::F64, &[Some(1), None]));
    let mut values = vec![x.clone(), y.clone()];
    for &(kind, op, a, c) in steps {
        let a = values[a % values.len()].clone();
        let c = values[c % values.len()].clone();
        let v = match kind % 3 {
            0 => b::elemwise(UNARY[op % UNARY.len()], &[a]),
            1 => b::elemwise(BINARY[op % BINARY.len()], &[a, c]),
            _ => b::sum(&a, Some(&[0]), true),
        }
        .expect("well-typed by construction");
        values.push(v);
    }
    let last = values.last().cloned().expect("at least the inputs");
    (vec![x, y], b::sum(&last, None, false).expect("a sum"))
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    #[test]
    fn gradients_of_random_graphs_are_typed_and_linear(
        steps in proptest::collection::vec((0u8..3, 0usize..8, 0usize..64, 0usize..64), 1..80)
    ) {
        let (wrt, cost) = build(&steps);
        let options = GradOptions {
            disconnected_inputs: DisconnectedInputs::Ignore,
            ..GradOptions::default()
        };
        let grads = grad(&cost, &wrt, &options).expect("a gradient");
        let grads: Vec<Var> = grads.into_iter().map(|g| g.into_var().expect("zeros or a value")).collect();
        for (g, w) in grads.iter().zip(&wrt) {
            prop_assert_eq!(g.ty(), w.ty());
        }
        let forward = toposort(std::slice::from_ref(&cost)).len();
        let backward = toposort(&grads).len();
        prop_assert!(backward <= 14 * forward + 10, "{} nodes for {}", backward, forward);

        // Forward mode through the same graph: also built, typed and linear.
        let tangents: Vec<Var> = wrt.iter().map(|w| Var::input(Some("t"), w.ty().clone())).collect();
        let jvp = pushforward(std::slice::from_ref(&cost), &wrt, &tangents).expect("a pushforward");
        prop_assert_eq!(jvp[0].ndim(), 0);
        prop_assert!(toposort(&jvp).len() <= 40 * forward + 20);
    }
}
