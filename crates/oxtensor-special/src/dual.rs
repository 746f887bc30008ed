//! Dual numbers over double-double: a value and its derivative in one chosen direction of the
//! parameters, for forward-mode differentiation of the series and continued fractions that
//! define `betainc` and `hyp2f1` (see `incbeta_grad` and `hyp2f1_grad`).
//!
//! Why double-double: the derivatives are sums of the same kind as the functions themselves
//! (alternating series, continued fractions, connection formulas whose two halves cancel), so
//! they get the same extra precision before the single rounding to f64.

use crate::dd::DD;
use core::ops::{Add, Div, Mul, Neg, Sub};

/// `v + d·ε` with `ε² = 0`: a quantity and its derivative along the seeded direction.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Dual {
    /// The value.
    pub v: DD,
    /// The derivative.
    pub d: DD,
}

impl Dual {
    /// A quantity that does not depend on the parameters.
    pub fn constant(v: DD) -> Dual {
        Dual { v, d: DD::ZERO }
    }

    /// A parameter whose derivative along the chosen direction is `seed`.
    pub fn var(v: DD, seed: f64) -> Dual {
        Dual {
            v,
            d: DD::new(seed),
        }
    }

    /// `exp(self)`.
    pub fn exp(self) -> Dual {
        let e = self.v.exp();
        Dual {
            v: e,
            d: e * self.d,
        }
    }

    /// `1 / self`.
    pub fn recip(self) -> Dual {
        let r = self.v.recip();
        Dual {
            v: r,
            d: -(self.d * r * r),
        }
    }
}

impl Add for Dual {
    type Output = Dual;
    fn add(self, o: Dual) -> Dual {
        Dual {
            v: self.v + o.v,
            d: self.d + o.d,
        }
    }
}

impl Add<f64> for Dual {
    type Output = Dual;
    fn add(self, o: f64) -> Dual {
        Dual {
            v: self.v + o,
            d: self.d,
        }
    }
}

impl Sub for Dual {
    type Output = Dual;
    fn sub(self, o: Dual) -> Dual {
        Dual {
            v: self.v - o.v,
            d: self.d - o.d,
        }
    }
}

impl Neg for Dual {
    type Output = Dual;
    fn neg(self) -> Dual {
        Dual {
            v: -self.v,
            d: -self.d,
        }
    }
}

impl Mul for Dual {
    type Output = Dual;
    fn mul(self, o: Dual) -> Dual {
        Dual {
            v: self.v * o.v,
            d: self.d * o.v + self.v * o.d,
        }
    }
}

impl Mul<DD> for Dual {
    type Output = Dual;
    fn mul(self, o: DD) -> Dual {
        Dual {
            v: self.v * o,
            d: self.d * o,
        }
    }
}

impl Mul<f64> for Dual {
    type Output = Dual;
    fn mul(self, o: f64) -> Dual {
        Dual {
            v: self.v * o,
            d: self.d * o,
        }
    }
}

impl Div for Dual {
    type Output = Dual;
    fn div(self, o: Dual) -> Dual {
        let q = self.v / o.v;
        Dual {
            v: q,
            d: (self.d - q * o.d) / o.v,
        }
    }
}
