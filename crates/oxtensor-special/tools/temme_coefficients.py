#!/usr/bin/env python3
"""Taylor coefficients of Temme's C0(eta), C1(eta) for the incomplete gamma function
(src/incgamma.rs): C0 = 1/(lam-1) - 1/eta, C1 = 1/eta^3 - 1/(lam-1)^3 - 1/(lam-1)^2 - 1/(12(lam-1)),
eta^2/2 = lam - 1 - ln lam. Both cancel badly near eta = 0, so the crate uses these power series
there. Computed at 300 digits by interpolating on 24 Chebyshev points of radius 0.01 (the
truncation error of the degree-23 interpolant is far below the printed 17 digits)."""
import mpmath as mp
mp.mp.dps = 300
def lam_of_eta(eta):
    g = 1 + eta + eta**2/3
    return mp.findroot(lambda l: l - 1 - mp.log(l) - eta**2/2, g, tol=mp.mpf(10)**-280)
def C0(eta):
    l = lam_of_eta(eta); return 1/(l-1) - 1/eta
def C1(eta):
    l = lam_of_eta(eta); m = l - 1
    return 1/eta**3 - 1/m**3 - 1/m**2 - 1/(12*m)
N = 24; r = mp.mpf('0.01')
pts = [r*mp.cos(mp.pi*(k+mp.mpf(1)/2)/N) for k in range(N)]
for name, f in (("C0", C0), ("C1", C1)):
    A = mp.matrix([[p**j for j in range(N)] for p in pts]); b = mp.matrix([f(p) for p in pts])
    c = mp.lu_solve(A, b)
    print(name, [mp.nstr(c[j], 17) for j in range(14)])
