"""Examples from PyTensor's documentation, unchanged except for the imports
(``import oxtensor as pytensor``, ``import oxtensor.tensor as pt``)."""

import numpy as np

import oxtensor as pytensor
import oxtensor.tensor as pt
from oxtensor import In, function, shared


def test_baby_steps_adding_two_scalars():
    x = pt.dscalar("x")
    y = pt.dscalar("y")
    z = x + y
    f = function([x, y], z)
    assert f(2, 3) == np.array(5.0)
    assert np.allclose(f(16.3, 12.1), 28.4)
    assert type(x) is pt.TensorVariable
    assert repr(x.type) == "TensorType(float64, shape=())"
    assert np.allclose(z.eval({x: 16.3, y: 12.1}), 28.4)


def test_baby_steps_adding_two_matrices():
    x = pt.dmatrix("x")
    y = pt.dmatrix("y")
    z = x + y
    f = function([x, y], z)
    np.testing.assert_array_equal(f([[1, 2], [3, 4]], [[10, 20], [30, 40]]), np.array([[11.0, 22.0], [33.0, 44.0]]))
    np.testing.assert_array_equal(
        f(np.array([[1, 2], [3, 4]]), np.array([[10, 20], [30, 40]])), np.array([[11.0, 22.0], [33.0, 44.0]])
    )


def test_baby_steps_exercise():
    a = pt.vector()  # declare variable
    out = a + a**10  # build symbolic expression
    f = function([a], out)  # compile function
    np.testing.assert_array_equal(f([0, 1, 2]), np.array([0.0, 2.0, 1026.0]))


def test_logistic_function():
    x = pt.dmatrix("x")
    s = 1 / (1 + pt.exp(-x))
    logistic = pytensor.function([x], s)
    expected = np.array([[0.5, 0.73105858], [0.26894142, 0.11920292]])
    np.testing.assert_allclose(logistic([[0, 1], [-1, -2]]), expected, rtol=1e-7)
    s2 = (1 + pt.tanh(x / 2)) / 2
    logistic2 = pytensor.function([x], s2)
    np.testing.assert_allclose(logistic2([[0, 1], [-1, -2]]), expected, rtol=1e-7)


def test_computing_more_than_one_thing_at_the_same_time():
    a, b = pt.dmatrices("a", "b")
    diff = a - b
    abs_diff = abs(diff)
    diff_squared = diff**2
    f = pytensor.function([a, b], [diff, abs_diff, diff_squared])
    d, ad, d2 = f([[1, 1], [1, 1]], [[0, 1], [2, 3]])
    np.testing.assert_array_equal(d, [[1.0, 0.0], [-1.0, -2.0]])
    np.testing.assert_array_equal(ad, [[1.0, 0.0], [1.0, 2.0]])
    np.testing.assert_array_equal(d2, [[1.0, 0.0], [1.0, 4.0]])


def test_setting_a_default_value_for_an_argument():
    x, y = pt.dscalars("x", "y")
    z = x + y
    f = function([x, In(y, value=1)], z)
    assert f(33) == np.array(34.0)
    assert f(33, 2) == np.array(35.0)
    x, y, w = pt.dscalars("x", "y", "w")
    z = (x + y) * w
    f = function([x, In(y, value=1), In(w, value=2, name="w_by_name")], z)
    assert f(33) == np.array(68.0)
    assert f(33, 2) == np.array(70.0)
    assert f(33, 0, 1) == np.array(33.0)
    assert f(33, w_by_name=1) == np.array(34.0)
    assert f(33, w_by_name=1, y=0) == np.array(33.0)


def test_using_shared_variables():
    state = shared(0)
    inc = pt.iscalar("inc")
    accumulator = function([inc], state, updates=[(state, state + inc)])
    assert state.get_value() == 0
    assert accumulator(1) == np.array(0)
    assert state.get_value() == 1
    assert accumulator(300) == np.array(1)
    assert state.get_value() == 301
    state.set_value(-1)
    assert accumulator(3) == np.array(-1)
    assert state.get_value() == 2
    decrementor = function([inc], state, updates=[(state, state - inc)])
    assert decrementor(2) == np.array(2)
    assert state.get_value() == 0
    fn_of_state = state * 2 + inc
    # The type of foo must match the shared variable we are replacing
    # with the ``givens``
    foo = pt.scalar(dtype=state.dtype)
    skip_shared = function([inc, foo], fn_of_state, givens=[(state, foo)])
    assert skip_shared(1, 3) == np.array(7)
    assert state.get_value() == 0


def test_computing_gradients():
    x = pt.dscalar("x")
    y = x**2
    gy = pytensor.grad(y, x)
    f = pytensor.function([x], gy)
    assert f(4) == np.array(8.0)
    assert np.allclose(f(94.2), 188.4)
    x = pt.dmatrix("x")
    s = pt.sum(1 / (1 + pt.exp(-x)))
    gs = pytensor.grad(s, x)
    dlogistic = pytensor.function([x], gs)
    np.testing.assert_allclose(
        dlogistic([[0, 1], [-1, -2]]), np.array([[0.25, 0.19661193], [0.19661193, 0.10499359]]), rtol=1e-7
    )


def test_switch_condition():
    a, b = pt.scalars("a", "b")
    x, y = pt.matrices("x", "y")
    z_switch = pt.switch(pt.lt(a, b), pt.mean(x), pt.mean(y))
    f_switch = pytensor.function([a, b, x, y], z_switch, mode=pytensor.compile.mode.Mode(linker="vm"))
    val1 = 0.0
    val2 = 1.0
    big_mat1 = np.ones((100, 10))
    big_mat2 = np.ones((100, 10)) * 2
    assert f_switch(val1, val2, big_mat1, big_mat2) == 1.0
    assert f_switch(val2, val1, big_mat1, big_mat2) == 2.0


def _numpy_logistic_regression(D, w, b, steps):
    x, y = D
    for _ in range(steps):
        p_1 = 1 / (1 + np.exp(-(x @ w) - b))
        n = x.shape[0]
        # d(cost)/dw for cost = mean(xent) + 0.01 * sum(w**2)
        g = (p_1 - y) / n
        gw = x.T @ g + 0.02 * w
        gb = g.sum()
        w, b = w - 0.1 * gw, b - 0.1 * gb
    return w, b


def _logistic_regression(scale):
    # PyTensor's "A real example: logistic regression", with fewer training steps (and the
    # inputs optionally scaled down, so that the sigmoid does not saturate).
    rng = np.random.default_rng(2882)
    N = 400  # training sample size
    feats = 784  # number of input variables
    # generate a dataset: D = (input_values, target_class)
    D = (rng.standard_normal((N, feats)) * scale, rng.integers(size=N, low=0, high=2))
    training_steps = 50
    # Declare PyTensor symbolic variables
    x = pt.dmatrix("x")
    y = pt.dvector("y")
    # initialize the weight vector w randomly
    #
    # this and the following bias variable b
    # are shared so they keep their values
    # between training iterations (updates)
    w = pytensor.shared(rng.standard_normal(feats), name="w")
    # initialize the bias term
    b = pytensor.shared(0.0, name="b")
    w0, b0 = w.get_value(), b.get_value()
    # Construct PyTensor expression graph
    p_1 = 1 / (1 + pt.exp(-pt.dot(x, w) - b))  # Probability that target = 1
    prediction = p_1 > 0.5  # The prediction thresholded
    xent = -y * pt.log(p_1) - (1 - y) * pt.log(1 - p_1)  # Cross-entropy loss function
    cost = xent.mean() + 0.01 * (w**2).sum()  # The cost to minimize
    gw, gb = pt.grad(cost, [w, b])  # Compute the gradient of the cost
    # w.r.t weight vector w and
    # bias term b (we shall
    # return to this in a
    # following section of this
    # tutorial)
    # Compile
    train = pytensor.function(
        inputs=[x, y], outputs=[prediction, xent], updates=((w, w - 0.1 * gw), (b, b - 0.1 * gb)), name="train"
    )
    predict = pytensor.function(inputs=[x], outputs=prediction, name="predict")
    # Train
    for i in range(training_steps):
        pred, err = train(D[0], D[1])
    assert pred.dtype == np.bool_ and pred.shape == (N,)
    assert err.shape == (N,)
    return D, w0, b0, w.get_value(), b.get_value(), predict, training_steps


def _check_logistic_regression(scale):
    D, w0, b0, w, b, predict, steps = _logistic_regression(scale)
    w_ref, b_ref = _numpy_logistic_regression(D, w0, b0, steps)
    np.testing.assert_allclose(w, w_ref, rtol=1e-8, atol=1e-12)
    np.testing.assert_allclose(b, b_ref, rtol=1e-8, atol=1e-12)
    p = 1 / (1 + np.exp(-(D[0] @ w_ref) - b_ref))
    np.testing.assert_array_equal(predict(D[0]), p > 0.5)


def test_logistic_regression_example_unsaturated():
    _check_logistic_regression(scale=0.02)


def test_logistic_regression_example():
    # With the documentation's data the sigmoid saturates (p_1 == 1.0 exactly): the naive
    # log(1 - p_1) is -inf and its gradient NaN unless the stabilize rewrites turn
    # 1/(1+exp(-z)) into sigmoid(z) and log(1 - sigmoid(z)) into -softplus(z), as PyTensor's do.
    _check_logistic_regression(scale=1.0)
