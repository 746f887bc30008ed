//! `Function::call_into`: a lent output buffer is written by the native backend's kernels, only
//! when it fits the output, and never changes what a call returns.

use oxtensor::{DType, Mode, Tensor, function, vector};

fn t(v: &[f64]) -> Tensor {
    Tensor::from_slice(v, &[v.len()]).expect("tensor")
}

#[test]
fn a_fitting_lent_buffer_receives_the_output_and_others_are_left_alone() {
    let x = vector("x", DType::F64);
    let y = &x * &x + 1.0;
    for (mode, native) in [(Mode::FAST_RUN, true), (Mode::FAST_COMPILE, false)] {
        let f = function(std::slice::from_ref(&x), std::slice::from_ref(&y))
            .mode(mode)
            .build()
            .expect("compile");
        let buffer = Tensor::zeros(DType::F64, &[3]).expect("buffer");
        let lent = [Some(buffer.clone())];
        // SAFETY: `buffer` is owned storage nothing else reads or writes during the call (its
        // only other handle, `buffer` itself, is not read until the call returns).
        let outs = unsafe { f.call_into(vec![t(&[1., 2., 3.])], &lent) }.expect("call");
        assert_eq!(outs[0].to_vec_as::<f64>(), vec![2., 5., 10.]);
        assert_eq!(outs[0].data_ptr() == buffer.data_ptr(), native);
        if native {
            assert_eq!(buffer.to_vec_as::<f64>(), vec![2., 5., 10.]);
        }
        // A buffer of another shape is never written; the output is fresh.
        let small = Tensor::zeros(DType::F64, &[2]).expect("buffer");
        let lent = [Some(small.clone())];
        // SAFETY: as above.
        let outs = unsafe { f.call_into(vec![t(&[1., 2., 3.])], &lent) }.expect("call");
        assert_eq!(outs[0].to_vec_as::<f64>(), vec![2., 5., 10.]);
        assert_ne!(outs[0].data_ptr(), small.data_ptr());
        assert_eq!(small.to_vec_as::<f64>(), vec![0., 0.]);
    }
}
