"""Generate `src/ziggurat/tables.rs`: the ziggurat layer tables NumPy's `Generator` uses.

Why measured and not only computed: the exact 256-layer ziggurats (normal with tail start
r = 3.6541528853610088, exponential with r = 7.6971174701310497) differ from the tables NumPy
ships by about 1e-15 relatively (NumPy's were made by an unrecorded double-precision
procedure).  A draw that is accepted on its first try is exactly `magnitude * w[idx]`, so to
reproduce NumPy's streams bit for bit we need NumPy's `w` values themselves.  This script
measures them: it draws from `np.random.Generator(PCG64(seed))`, decodes the same raw words
(`PCG64.random_raw`) the way the ziggurat does, and solves `out == magnitude * w[idx]` for the
one floating-point `w[idx]` consistent with every observation.

The other tables only decide acceptance at layer edges (`k`, a threshold on the magnitude) and
inside the wedges (`f`, the density at each layer edge); they are computed with mpmath from the
measured layer edges x_i = w[i] * 2**bits, as in Marsaglia & Tsang (2000):
    k[0] = ceil(2**bits * r / x_0),  k[1] = 0,  k[i] = ceil(2**bits * x_{i-1} / x_i),
(a magnitude m is inside layer i's rectangle exactly when m * w[i] < x_{i-1}, i.e. m < k[i]),
    f[0] = 1,  f[i] = density(x_i).
A difference in them from NumPy's changes a draw with probability below 1e-12.

Run: python3 scripts/gen_ziggurat.py > src/ziggurat/tables.rs   (NumPy 2.x, mpmath)
"""
import math

import mpmath as mp
import numpy as np

mp.mp.dps = 50
NOR_R = 3.6541528853610088
EXP_R = 7.6971174701310497


def exact_edges(kind):
    """Exact layer edges x_0..x_255 (x_0 = pseudo-width of the base strip)."""
    if kind == "normal":
        r = mp.mpf(NOR_R)
        f = lambda t: mp.exp(-t * t / 2)
        v = r * f(r) + mp.sqrt(mp.pi / 2) * mp.erfc(r / mp.sqrt(2))
        inv = lambda y: mp.sqrt(-2 * mp.log(y))
    else:
        r = mp.mpf(EXP_R)
        f = lambda t: mp.exp(-t)
        v = r * f(r) + f(r)
        inv = lambda y: -mp.log(y)
    x = [None] * 256
    x[255] = r
    for i in range(254, 0, -1):
        x[i] = inv(v / x[i + 1] + f(x[i + 1]))
    x[0] = v / f(r)
    return x, f


def k_table(x, r, bits):
    m = mp.mpf(2) ** bits
    return [int(mp.ceil(r / x[0] * m)), 0] + [int(mp.ceil(x[i - 1] / x[i] * m)) for i in range(2, 256)]


SPECS = {
    # name: (kind, bits of the magnitude, float type)
    "normal64": ("normal", 52, np.float64),
    "exp64": ("exp", 53, np.float64),
    "normal32": ("normal", 23, np.float32),
    "exp32": ("exp", 23, np.float32),
}


def words(seed, n, spec):
    raw = np.random.PCG64(seed).random_raw(n)
    if spec[2] is np.float64:
        return [int(w) for w in raw]
    out = []
    for w in raw:
        w = int(w)
        out += [w & 0xFFFFFFFF, w >> 32]
    return out


def decode(name, w):
    if name == "normal64":
        return w & 0xFF, ((w >> 8) >> 1) & ((1 << 52) - 1)
    if name == "exp64":
        w >>= 3
        return w & 0xFF, w >> 8
    if name == "normal32":
        return w & 0xFF, (w >> 9) & 0x7FFFFF
    w >>= 1
    return w & 0xFF, w >> 8


def draws(name, seed, n):
    g = np.random.Generator(np.random.PCG64(seed))
    dt = SPECS[name][2]
    if name.startswith("normal"):
        return g.standard_normal(n, dtype=dt)
    return g.standard_exponential(n, dtype=dt)


def times(mag, w, ft):
    return float(ft(mag) * ft(w))


def measure(name):
    kind, bits, ft = SPECS[name]
    x, _ = exact_edges(kind)
    scale = 2.0**bits
    w_exact = [float(xi) / scale for xi in x]
    k_exact = k_table(x, x[255], bits)
    obs = {}
    n = 4000
    for seed in range(400):
        ws = words(seed, n // 2 if ft is np.float32 else n, SPECS[name])
        out = draws(name, seed, len(ws))
        for j, w in enumerate(ws):
            idx, mag = decode(name, w)
            o = abs(float(out[j]))
            if mag < k_exact[idx]:
                obs.setdefault(idx, []).append((mag, o))
                continue
            if mag > 0 and idx > 0 and abs(o / (mag * w_exact[idx]) - 1) < 1e-6:
                obs.setdefault(idx, []).append((mag, o))
            break
        if len(obs) == 256 and min(len(v) for v in obs.values()) >= 3:
            break
    table = []
    for idx in range(256):
        pts = obs.get(idx, [])
        if not pts:
            raise SystemExit(f"{name}: no observation of layer {idx}")
        mag, o = max(pts)
        c = ft(o / mag)
        cands = [c]
        up = down = c
        for _ in range(16):
            up = np.nextafter(up, ft(np.inf))
            down = np.nextafter(down, ft(0))
            cands += [up, down]
        ok = sorted({float(w) for w in cands if all(times(m_, w, ft) == oo for m_, oo in pts)})
        if len(ok) != 1:
            raise SystemExit(f"{name}: layer {idx} has {len(ok)} consistent widths")
        table.append(ok[0])
    return table


def emit(name, ty, values, fmt, per_line):
    print(f"pub(crate) static {name}: [{ty}; 256] = [")
    for i in range(0, 256, per_line):
        print("    " + " ".join(f"{fmt(v)}," for v in values[i:i + per_line]))
    print("];\n")


def main():
    print("//! Ziggurat tables of NumPy's `Generator` (normal and exponential, f64 and f32).")
    print("//!")
    print("//! Generated by `scripts/gen_ziggurat.py` (see its docstring for how): the widths `W*`")
    print("//! are measured from NumPy's own draws; `K*` and `F*` are computed with mpmath from them.")
    print("//! Floats are stored as their bits (exact); `super` turns them into `f32`/`f64` tables.")
    print("//! Do not edit by hand.\n")
    print("#[rustfmt::skip]")
    print("mod data {")
    for name, (kind, bits, ft) in SPECS.items():
        w = measure(name)
        scale = 2.0**bits
        x = [mp.mpf(wi) * mp.mpf(2) ** bits for wi in w]
        r = mp.mpf(NOR_R if kind == "normal" else EXP_R)
        assert float(x[255]) == float(ft(r)), (name, x[255])
        k = k_table(x, x[255], bits)
        dens = (lambda t: mp.exp(-t * t / 2)) if kind == "normal" else (lambda t: mp.exp(-t))
        f = [1.0] + [float(ft(float(dens(x[i])))) for i in range(1, 256)]
        tag = {"normal64": "NOR_F64", "exp64": "EXP_F64", "normal32": "NOR_F32", "exp32": "EXP_F32"}[name]
        if ft is np.float64:
            kt, bt = "u64", "u64"
            fb = lambda v: f"0x{int(np.float64(v).view(np.uint64)):016x}"
            per = 4
        else:
            kt, bt = "u32", "u32"
            fb = lambda v: f"0x{int(np.float32(v).view(np.uint32)):08x}"
            per = 8
        print(f"/// Magnitude thresholds below which a {name} draw is accepted at once.")
        emit(f"K_{tag}", kt, k, lambda v: f"0x{v:016x}" if kt == "u64" else f"0x{v:08x}", per)
        print(f"/// Bits of the layer widths divided by 2^{bits} (measured from NumPy, see the module docs).")
        emit(f"W_{tag}_BITS", bt, w, fb, per)
        print("/// Bits of the density at each layer edge (f[0] = 1 at the top).")
        emit(f"F_{tag}_BITS", bt, f, fb, per)

if __name__ == "__main__":
    main()
    print("}")
    print("pub(crate) use data::*;")
