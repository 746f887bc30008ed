//! The main job, end to end: build symbolic graphs, compile them into functions, call them on
//! arrays, and print the results and the compiled graphs.
//!
//! Run with `cargo run --release -p oxtensor --example demo`.

use oxtensor::ops::{self, Idx};
use oxtensor::{
    DType, Mode, PrintOptions, Tensor, function, get_value, grad_vars, matrix, scalar, shared,
    vector,
};

type Result<T> = std::result::Result<T, Box<dyn std::error::Error>>;

fn show(label: &str, t: &Tensor) {
    // Multi-line (matrix) values continue under the first line's values.
    let text = t.to_string().replace('\n', &format!("\n{:>31}", ""));
    println!("{label:>28} = {text}  ({})", t.dtype());
}

fn main() -> Result<()> {
    println!("== 1. Elementwise math with broadcasting ==");
    let x = vector("x", DType::F64);
    let y = vector("y", DType::F64);
    let z = (-(&x * &x)).exp() * y.sin() + (&x * &y).abs().log1p();
    let f = function(&[x.clone(), y.clone()], std::slice::from_ref(&z)).build()?;
    let xs = Tensor::from_slice(&[-1.0, 0.0, 0.5, 2.0], &[4])?;
    let ys = Tensor::from_slice(&[0.1, 0.2, 0.3, 0.4], &[4])?;
    show(
        "exp(-x²)·sin(y)+log1p(|xy|)",
        &f.call(&[xs.clone(), ys.clone()])?[0],
    );
    print!("{}", f.dprint(PrintOptions::default()));

    println!("\n== 2. Reductions, statistics, stable functions ==");
    let m = matrix("m", DType::F64);
    let outs = [
        m.sum(Some(&[1])),
        ops::mean(&m, Some(&[0]), false)?,
        ops::std(&m, None, 0, false)?,
        ops::argmax(&m, Some(-1), false)?,
        ops::softplus(&m)?.max(None),
    ];
    let g = function(std::slice::from_ref(&m), &outs).build()?;
    let data = Tensor::from_slice(&[1.0, 5.0, -2.0, 800.0, -800.0, 3.0], &[2, 3])?;
    let names = [
        "row sums",
        "column means",
        "std of all",
        "argmax per row",
        "max softplus (no overflow)",
    ];
    for (name, value) in names.iter().zip(g.call(std::slice::from_ref(&data))?) {
        show(name, &value);
    }

    println!("\n== 3. Indexing, reshapes and functional updates ==");
    let v = vector("v", DType::F32);
    let rev = v.at(&[Idx::range(None, None, Some(-1))]);
    let grid = v.reshape(&[2, -1]).t();
    let bumped = ops::inc_subtensor(
        &v.at(&[Idx::range(Some(1), Some(3), None)]),
        &oxtensor::Var::constant(Tensor::scalar(10.0f32)),
    )?;
    let h = function(std::slice::from_ref(&v), &[rev, grid, bumped]).build()?;
    let vals = Tensor::from_slice(&[1.0f32, 2.0, 3.0, 4.0, 5.0, 6.0], &[6])?;
    for (name, value) in ["v[::-1]", "v.reshape(2, -1).T", "inc_subtensor(v[1:3], 10)"]
        .iter()
        .zip(h.call(&[vals])?)
    {
        show(name, &value);
    }

    println!("\n== 4. Shared state and updates: a running counter and a matrix-vector model ==");
    let w = shared(Tensor::from_slice(&[0.5, -0.25, 1.0], &[3])?, Some("w"));
    let lr = scalar("lr", DType::F64);
    let a = matrix("a", DType::F64);
    let pred = ops::matmul(&a, &w)?;
    let loss = ops::mean(&ops::sqr(&pred)?, None, false)?;
    let grad_w = grad_vars(&loss, std::slice::from_ref(&w))?.remove(0);
    let step = function(&[a.clone(), lr.clone()], std::slice::from_ref(&loss))
        .updates(&[(w.clone(), &w - &(&lr * &grad_w))])
        .build()?;
    let a_val = Tensor::from_slice(&[1.0, 2.0, 0.0, 0.0, 1.0, 1.0, 3.0, 0.0, 1.0], &[3, 3])?;
    for i in 0..5 {
        let l = step.call(&[a_val.clone(), Tensor::scalar(0.05)])?;
        println!(
            "{:>28} = {:.6}   w = {}",
            format!("step {i} loss"),
            l[0].item::<f64>().unwrap_or(f64::NAN),
            get_value(&w)?
        );
    }

    println!("\n== 5. Rewrites make naive formulas stable: log(1 + exp(x)) ==");
    let x = vector("x", DType::F64);
    let naive = (x.exp() + 1.0).log();
    let big = Tensor::from_slice(&[-1000.0, 0.0, 1000.0], &[3])?;
    for (name, mode) in [
        ("FAST_COMPILE", Mode::FAST_COMPILE),
        ("FAST_RUN", Mode::FAST_RUN),
    ] {
        let f = function(std::slice::from_ref(&x), std::slice::from_ref(&naive))
            .mode(mode)
            .build()?;
        show(
            &format!("{name} gives"),
            &f.call(std::slice::from_ref(&big))?[0],
        );
        print!("{}", f.dprint(PrintOptions::default()));
    }

    println!("\n== 6. A clear error for a bad call ==");
    match f.call(&[Tensor::from_slice(&[1.0f64, 2.0], &[2, 1])?, ys]) {
        Err(e) => println!("{e}"),
        Ok(_) => println!("unexpectedly accepted a matrix"),
    }

    println!("\n== 7. A loop: h[t] = a·h[t-1] + x[t] by scan, its last value and d/da ==");
    let (a, h0) = (scalar("a", DType::F64), scalar("h0", DType::F64));
    let x = vector("x", DType::F64);
    let step_value = || oxtensor::Var::input(None, oxtensor::TensorType::scalar(DType::F64));
    let (xt, prev) = (step_value(), step_value());
    let h = oxtensor::scan(oxtensor::ScanSpec {
        tap_inputs: &[xt.clone(), prev.clone()],
        sequence_taps: vec![vec![0]],
        state_taps: vec![vec![-1]],
        other_inputs: &[],
        outputs: &[&(&a * &prev) + &xt],
        n_mapped: 0,
        until: false,
        n_steps: oxtensor::Var::int_constant(-1),
        sequences: std::slice::from_ref(&x),
        initial: &[ops::expand_dims(&h0, 0)?],
        others: &[],
        go_backwards: false,
        truncate_gradient: None,
        name: Some("ar1"),
    })?
    .remove(0);
    let last = ops::subtensor(&h, &[Idx::int(-1)])?;
    let da = grad_vars(&h.sum(None), std::slice::from_ref(&a))?;
    let f = function(&[a, x, h0], &[h, last, da[0].clone()]).build()?;
    let out = f.call(&[
        Tensor::scalar(0.5),
        Tensor::from_slice(&[1.0, 0.0, 0.0, 2.0], &[4])?,
        Tensor::scalar(0.0),
    ])?;
    for (label, t) in ["h", "h[-1]", "d sum(h) / d a"].iter().zip(&out) {
        show(label, t);
    }
    print!("{}", f.dprint(PrintOptions::default()));
    Ok(())
}
