//! The matrix product helper of staged loops (`emit::staged`): one C function per float type,
//! choosing its loop order from the operands' strides at run time.

/// The matrix product helper `ox_mm_<t>` for C type `t` (`ox_mm_double`, `ox_mm_float`),
/// defined once per translation unit:
///
/// ```c
/// void ox_mm_double(int64_t m, int64_t n, int64_t k, const double *a, int64_t as0, int64_t as1,
///                const double *b, int64_t bs0, int64_t bs1, const double *acc, double *c);
/// ```
///
/// sets the contiguous `m × n` matrix `c` to `acc + a · b` (`acc`, contiguous, may be null, or
/// `c` itself: a running sum updated in place, read only through `c` then),
/// reading `a[i][p]` at `a[i * as0 + p * as1]` and `b[p][j]` at `b[p * bs0 + j * bs1]`. A
/// matrix–vector product whose matrix has contiguous rows takes dot products, four rows at a
/// time in `lanes` partial sums each; one whose matrix has contiguous columns sums scaled
/// columns, `8 · lanes` rows at a time in eight vector registers (GCC vector extensions); an
/// outer product scales `b`'s row once per row of `c` (added to `acc`'s row in the
/// same pass); anything else (vector–matrix, matrix–matrix) builds each row of `c` as a sum of
/// scaled rows of `b`. So the sums are taken in another order than the interpreter's, within
/// the tolerance of reordered sums.
pub(super) fn helper(t: &str, lanes: usize) -> String {
    let name = format!("ox_mm_{t}");
    format!(
        r#"
#ifndef OX_MM_{t}_DEFINED
#define OX_MM_{t}_DEFINED
typedef {t} ox_v_{t} __attribute__((vector_size(64)));
static inline ox_v_{t} ox_ld_{t}(const {t} *p) {{ ox_v_{t} v; memcpy(&v, p, sizeof v); return v; }}
static void {name}(int64_t m, int64_t n, int64_t k, const {t} *a, int64_t as0, int64_t as1,
                   const {t} *b, int64_t bs0, int64_t bs1, const {t} *acc, {t} *restrict c) {{
  const int keep = acc == c;
  if (keep) acc = 0;
  if (n == 1 && as1 == 1 && bs0 == 1) {{
    int64_t i = 0;
    for (; i + 4 <= m; i += 4) {{
      const {t} *r0 = a + i * as0, *r1 = r0 + as0, *r2 = r1 + as0, *r3 = r2 + as0;
      {t} s0[{lanes}] = {{0}}, s1[{lanes}] = {{0}}, s2[{lanes}] = {{0}}, s3[{lanes}] = {{0}};
      int64_t p = 0;
      for (; p + {lanes} <= k; p += {lanes}) {{
        for (int l = 0; l < {lanes}; l++) {{
          const {t} x = b[p + l];
          s0[l] += r0[p + l] * x;
          s1[l] += r1[p + l] * x;
          s2[l] += r2[p + l] * x;
          s3[l] += r3[p + l] * x;
        }}
      }}
      {t} t0 = 0, t1 = 0, t2 = 0, t3 = 0;
      for (int l = 0; l < {lanes}; l++) {{
        t0 += s0[l];
        t1 += s1[l];
        t2 += s2[l];
        t3 += s3[l];
      }}
      for (; p < k; p++) {{
        const {t} x = b[p];
        t0 += r0[p] * x;
        t1 += r1[p] * x;
        t2 += r2[p] * x;
        t3 += r3[p] * x;
      }}
      c[i] = (acc ? acc[i] : keep ? c[i] : 0) + t0;
      c[i + 1] = (acc ? acc[i + 1] : keep ? c[i + 1] : 0) + t1;
      c[i + 2] = (acc ? acc[i + 2] : keep ? c[i + 2] : 0) + t2;
      c[i + 3] = (acc ? acc[i + 3] : keep ? c[i + 3] : 0) + t3;
    }}
    for (; i < m; i++) {{
      const {t} *r = a + i * as0;
      {t} s[{lanes}] = {{0}};
      int64_t p = 0;
      for (; p + {lanes} <= k; p += {lanes}) {{
        for (int l = 0; l < {lanes}; l++) s[l] += r[p + l] * b[p + l];
      }}
      {t} sum = 0;
      for (int l = 0; l < {lanes}; l++) sum += s[l];
      for (; p < k; p++) sum += r[p] * b[p];
      c[i] = (acc ? acc[i] : keep ? c[i] : 0) + sum;
    }}
    return;
  }}
  if (n == 1 && as0 == 1) {{
    int64_t i0 = 0;
    for (; i0 + 8 * {lanes} <= m; i0 += 8 * {lanes}) {{
      ox_v_{t} s[8] = {{{{0}}}};
      for (int64_t p = 0; p < k; p++) {{
        const {t} *col = a + p * as1 + i0;
        const ox_v_{t} x = (ox_v_{t}){{0}} + b[p * bs0];
        _Pragma("GCC unroll 8") for (int r = 0; r < 8; r++) s[r] += ox_ld_{t}(col + r * {lanes}) * x;
      }}
      _Pragma("GCC unroll 8") for (int r = 0; r < 8; r++) {{
        const ox_v_{t} v = (acc ? ox_ld_{t}(acc + i0 + r * {lanes})
                            : keep ? ox_ld_{t}(c + i0 + r * {lanes}) : (ox_v_{t}){{0}}) + s[r];
        memcpy(c + i0 + r * {lanes}, &v, sizeof v);
      }}
    }}
    if (i0 == m) return;
    a += i0;
    c += i0;
    if (acc) acc += i0;
    m -= i0;
    if (!keep) for (int64_t i = 0; i < m; i++) c[i] = acc ? acc[i] : 0;
    int64_t p = 0;
    for (; p + 4 <= k; p += 4) {{
      const {t} x0 = b[p * bs0], x1 = b[(p + 1) * bs0], x2 = b[(p + 2) * bs0],
                x3 = b[(p + 3) * bs0];
      const {t} *c0 = a + p * as1, *c1 = c0 + as1, *c2 = c1 + as1, *c3 = c2 + as1;
      for (int64_t i = 0; i < m; i++) c[i] += c0[i] * x0 + c1[i] * x1 + c2[i] * x2 + c3[i] * x3;
    }}
    for (; p < k; p++) {{
      const {t} x = b[p * bs0];
      const {t} *c0 = a + p * as1;
      for (int64_t i = 0; i < m; i++) c[i] += c0[i] * x;
    }}
    return;
  }}
  if (k == 1 && bs1 == 1) {{
    for (int64_t i = 0; i < m; i++) {{
      {t} *restrict ci = c + i * n;
      const {t} x = a[i * as0];
      if (acc) {{
        const {t} *ri = acc + i * n;
        for (int64_t j = 0; j < n; j++) ci[j] = ri[j] + b[j] * x;
      }} else if (keep) {{
        for (int64_t j = 0; j < n; j++) ci[j] += b[j] * x;
      }} else {{
        for (int64_t j = 0; j < n; j++) ci[j] = b[j] * x;
      }}
    }}
    return;
  }}
  for (int64_t i = 0; i < m; i++) {{
    {t} *restrict ci = c + i * n;
    const {t} *ai = a + i * as0;
    if (acc) {{
      memcpy(ci, acc + i * n, (size_t)n * sizeof({t}));
    }} else if (!keep) {{
      for (int64_t j = 0; j < n; j++) ci[j] = 0;
    }}
    int64_t p = 0;
    if (bs1 == 1) {{
      for (; p + 4 <= k; p += 4) {{
        const {t} x0 = ai[p * as1], x1 = ai[(p + 1) * as1], x2 = ai[(p + 2) * as1],
                  x3 = ai[(p + 3) * as1];
        const {t} *b0 = b + p * bs0, *b1 = b0 + bs0, *b2 = b1 + bs0, *b3 = b2 + bs0;
        for (int64_t j = 0; j < n; j++) ci[j] += b0[j] * x0 + b1[j] * x1 + b2[j] * x2 + b3[j] * x3;
      }}
    }}
    for (; p < k; p++) {{
      const {t} x = ai[p * as1];
      const {t} *bp = b + p * bs0;
      if (bs1 == 1) {{
        for (int64_t j = 0; j < n; j++) ci[j] += bp[j] * x;
      }} else {{
        for (int64_t j = 0; j < n; j++) ci[j] += bp[j * bs1] * x;
      }}
    }}
  }}
}}
#endif
"#
    )
}
