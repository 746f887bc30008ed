//! The drivers every function shares: the walk of a strided space, block by block, for
//! elementwise kernels (`ox_map`) and reductions (`ox_reduce`).
//!
//! A kernel's own code is only what differs between kernels: its vectorised block loop (and,
//! for a reduction, the combining functions of its monoid, shared by every reduction with the
//! same op and dtype). The drivers call those through function pointers, once per block of
//! `OX_BLK` elements (or per row of a column block), which costs nothing measurable at run
//! time. The drivers are their own translation unit ([`source`]), compiled once per compiler
//! and flags into an object the cache keeps and links into every function's library; each
//! function's unit declares them ([`API`]). So a function compiles in about the time of its
//! block loops.
//!
//! Buffers are untyped (`uint64_t` slots hold an element of any dtype, and the union `ox_acc`
//! an accumulator of any type); kernels read and write them through their own types, which is
//! why both units are compiled with `-fno-strict-aliasing`.

use super::prelude::HEADER;

/// The drivers' types and declarations, included in every unit.
pub(crate) const API: &str = r#"
#define OX_HIDDEN __attribute__((visibility("hidden")))

/* A kernel's block: `n` elements of each output `o[m]` from the unit-stride inputs `a[k]`,
   an output possibly being exactly an input. Returns non-zero if some element is an
   error. */
typedef int32_t (*ox_blk_t)(int64_t n, void *const *o, const void *const *a);

/* An accumulator of any reduction. */
typedef union { double f64; float f32; uint64_t u64; int64_t i64; uint32_t u32; int32_t i32;
                uint16_t u16; int16_t i16; uint8_t u8; int8_t i8; } ox_acc;

/* How one op reduces values of one dtype (emitted once per translation unit and pair). The
   arrays of accumulators the drivers hand these functions hold `asz`-byte accumulators, one
   after the other. */
typedef struct {
  int32_t vsz, asz, osz;  /* bytes of a value, an accumulator (in an ox_acc) and an output */
  ox_acc ident;           /* the identity */
  /* *r = the reduction of v[0..n), n >= 1, pairwise over lanes */
  void (*leaf)(int64_t n, const void *v, void *r);
  /* a[j] = push(a[j], v[j]) */
  void (*push)(int64_t n, const void *v, void *a);
  /* a[j] = comb(b[j], a[j]) */
  void (*comb)(int64_t n, const void *b, void *a);
  /* out[j] = a[j] converted to the output dtype; NULL when the types are the same */
  void (*fin)(int64_t n, const void *a, void *out);
} ox_monoid;

/* A reduction kernel: its monoid, its operands, and the fused producer's block (`NULL`:
   operand 0's values are reduced). */
typedef struct {
  const ox_monoid *m;
  int32_t nin;
  const uint8_t *isz;
  ox_blk_t vals;
} ox_red;

/* The elementwise driver (see `ox_kN`). */
OX_HIDDEN int32_t ox_map(ox_blk_t blk, int32_t may_fail, int32_t nin, const uint8_t *isz,
                         int32_t nout, const uint8_t *osz, int64_t start, int64_t end,
                         int32_t ndim, const int64_t *dims, const void *const *inp,
                         const int64_t *istr, void *const *outp);
/* The reduction driver (see `ox_rN`). */
OX_HIDDEN int32_t ox_reduce(const ox_red *r, int64_t ostart, int64_t oend, int32_t nk,
                            const int64_t *kdims, int32_t nr, const int64_t *rdims,
                            const void *const *inp, const int64_t *kstr, const int64_t *rstr,
                            int32_t cols, void *outp);
"#;

/// The drivers' definitions.
const DRIVERS: &str = r#"
/* Loop control over operands and dimensions: every hot loop is in a kernel's block function
   or in `ox_gather`, so `-O1` runs these as fast, and cuts about a third of the drivers'
   compile time (which a function compiled into an empty cache waits for). */
#define OX_CONTROL __attribute__((optimize("O1")))
/* Buffers the kernels' vector loops read and write: a whole vector per cache line. */
#define OX_ALIGNED __attribute__((aligned(64)))

/* Walking a strided space in C order: the multi-index of a flat position, an operand's offset
   at a multi-index, and advancing by `run` positions along the innermost dimension (which must
   not pass its end), updating the offsets of `nops` operands with strides `st[k * nd + d]`. */
OX_CONTROL static void ox_start(int64_t pos, int32_t nd, const int64_t *dims, int64_t *idx) {
  for (int32_t d = nd - 1; d >= 0; d--) { idx[d] = pos % dims[d]; pos /= dims[d]; } }
OX_CONTROL static int64_t ox_offset(int32_t nd, const int64_t *idx, const int64_t *st) {
  int64_t o = 0;
  for (int32_t d = 0; d < nd; d++) o += idx[d] * st[d];
  return o; }
OX_CONTROL static void ox_advance(int64_t run, int32_t nd, const int64_t *dims, int64_t *idx,
                                  int32_t nops, int64_t *off, const int64_t *st) {
  for (int32_t k = 0; k < nops; k++) off[k] += run * st[k * nd + nd - 1];
  idx[nd - 1] += run;
  if (idx[nd - 1] < dims[nd - 1]) return;
  for (int32_t k = 0; k < nops; k++) off[k] -= dims[nd - 1] * st[k * nd + nd - 1];
  idx[nd - 1] = 0;
  for (int32_t d = nd - 2; d >= 0; d--) {
    idx[d]++;
    for (int32_t k = 0; k < nops; k++) off[k] += st[k * nd + d];
    if (idx[d] < dims[d]) return;
    for (int32_t k = 0; k < nops; k++) off[k] -= dims[d] * st[k * nd + d];
    idx[d] = 0;
  } }

/* Copies `n` elements of `size` bytes, `st` elements apart from `src`, to the unit-stride
   `dst`; `st == 0` repeats one element. */
__attribute__((noinline)) static void ox_gather(void *restrict dst,
                                                const unsigned char *restrict src, int64_t n,
                                                int64_t st, int32_t size) {
  switch (size) {
  case 8: { uint64_t *d = dst, x; if (st == 0) { memcpy(&x, src, 8); for (int64_t j = 0; j < n; j++) d[j] = x; }
            else for (int64_t j = 0; j < n; j++) memcpy(d + j, src + j * st * 8, 8); } break;
  case 4: { uint32_t *d = dst, x; if (st == 0) { memcpy(&x, src, 4); for (int64_t j = 0; j < n; j++) d[j] = x; }
            else for (int64_t j = 0; j < n; j++) memcpy(d + j, src + j * st * 4, 4); } break;
  case 2: { uint16_t *d = dst, x; if (st == 0) { memcpy(&x, src, 2); for (int64_t j = 0; j < n; j++) d[j] = x; }
            else for (int64_t j = 0; j < n; j++) memcpy(d + j, src + j * st * 2, 2); } break;
  default: { uint8_t *d = dst; for (int64_t j = 0; j < n; j++) d[j] = src[j * st]; } break;
  } }

/* Copies one element of `size` bytes (a constant-size copy: no call to `memcpy`). */
static inline void ox_put(void *dst, const void *src, int32_t size) {
  switch (size) {
  case 8: memcpy(dst, src, 8); break;
  case 4: memcpy(dst, src, 4); break;
  case 2: memcpy(dst, src, 2); break;
  default: memcpy(dst, src, 1); break;
  } }

/* Operand `k`'s unit-stride pointer to the block `[s, s + n)` of a run starting at `base`
   with inner stride `st`: the data itself, or `buf` (gathered here; for a broadcast operand,
   filled once per run by the caller). */
static inline const void *ox_block(const unsigned char *base, int64_t st, int64_t s, int64_t n,
                                   int32_t size, void *buf) {
  if (st == 1) return base + s * size;
  if (st != 0) ox_gather(buf, base + s * st * size, n, st, size);
  return buf; }

/* True when the byte ranges `[a, a + na)` and `[b, b + nb)` overlap. */
static inline int ox_overlap(const void *a, int64_t na, const void *b, int64_t nb) {
  const uintptr_t x = (uintptr_t)a, y = (uintptr_t)b;
  return x < y + (uintptr_t)nb && y < x + (uintptr_t)na; }

/* The elementwise driver: flat output positions `[start, end)` of the walk `dims` (see
   `ox_kN`), block by block. An output may be written over an input: exactly (same address
   and element size), which the block functions allow, unless the kernel `may_fail`; any
   other overlap, or an exact one in a kernel that may fail, is computed into a scratch
   buffer and copied out afterwards. The first block with an error ends the call (non-zero)
   before its scratch is copied out: the inputs of the failing elements are left as they
   were, for the interpreter to report the error. */
OX_CONTROL int32_t ox_map(ox_blk_t blk, int32_t may_fail, int32_t nin, const uint8_t *isz,
                          int32_t nout, const uint8_t *osz, int64_t start, int64_t end,
                          int32_t ndim, const int64_t *dims, const void *const *inp,
                          const int64_t *istr, void *const *outp) {
  if (ndim < 1 || ndim > OX_MAXDIM || nin < 0 || nout < 1) return -1;
  const int32_t ni = nin > 0 ? nin : 1;
  OX_ALIGNED uint64_t buf[ni][OX_BLK];
  OX_ALIGNED uint64_t tmp[nout][OX_BLK];
  int64_t idx[OX_MAXDIM], off[ni], st[ni];
  const void *p[ni];
  void *o[nout], *t[nout];
  for (int32_t m = 0; m < nout; m++) t[m] = tmp[m];
  ox_start(start, ndim, dims, idx);
  for (int32_t k = 0; k < nin; k++) {
    off[k] = ox_offset(ndim, idx, istr + k * ndim);
    st[k] = istr[k * ndim + ndim - 1];
  }
  const int64_t inner = dims[ndim - 1];
  for (int64_t i = start; i < end;) {
    int64_t run = inner - idx[ndim - 1];
    if (run > end - i) run = end - i;
    for (int32_t k = 0; k < nin; k++)
      if (st[k] == 0)
        ox_gather(buf[k], (const unsigned char *)inp[k] + off[k] * isz[k],
                  run < OX_BLK ? run : OX_BLK, 0, isz[k]);
    for (int64_t s = 0; s < run; s += OX_BLK) {
      const int64_t n = run - s < OX_BLK ? run - s : OX_BLK;
      for (int32_t k = 0; k < nin; k++)
        p[k] = ox_block((const unsigned char *)inp[k] + off[k] * isz[k], st[k], s, n, isz[k], buf[k]);
      int32_t alias = 0;
      for (int32_t m = 0; m < nout; m++) {
        o[m] = (unsigned char *)outp[m] + (i + s) * osz[m];
        for (int32_t k = 0; k < nin; k++)
          alias |= st[k] == 1 && ox_overlap(o[m], n * osz[m], p[k], n * isz[k]) &&
                   (may_fail || o[m] != p[k] || osz[m] != isz[k]);
      }
      const int32_t bad = blk(n, alias ? t : o, p);
      if (bad) return bad;
      if (alias)
        for (int32_t m = 0; m < nout; m++) memcpy(o[m], t[m], (size_t)(n * osz[m]));
    }
    i += run;
    ox_advance(run, ndim, dims, idx, nin, off, istr);
  }
  return 0; }

/* The reduction driver (see `ox_rN`). Rows: each output reduces its elements run by run, in
   blocks reduced by `leaf` and combined pairwise (a binary-counter cascade). Columns: blocks
   of consecutive outputs accumulate whole rows with `push`, leaves of `OX_LEAF_ROWS` rows
   combined pairwise. */
OX_CONTROL int32_t ox_reduce(const ox_red *r, int64_t ostart, int64_t oend, int32_t nk,
                             const int64_t *kdims, int32_t nr, const int64_t *rdims,
                             const void *const *inp, const int64_t *kstr, const int64_t *rstr,
                             int32_t cols, void *outp) {
  const ox_monoid *m = r->m;
  const int32_t nin = r->nin;
  if (nk < 1 || nk > OX_MAXDIM || nr < 1 || nr > OX_MAXDIM || nin < 1) return -1;
  OX_ALIGNED uint64_t buf[nin][OX_BLK];
  OX_ALIGNED uint64_t vals[OX_BLK];
  void *vp[1] = { vals };
  const void *p[nin];
  int64_t kidx[OX_MAXDIM], ridx[OX_MAXDIM], koff[nin], roff[nin];
  int32_t bad = 0;
  int64_t rtotal = 1;
  for (int32_t d = 0; d < nr; d++) rtotal *= rdims[d];
  ox_start(ostart, nk, kdims, kidx);
  for (int32_t k = 0; k < nin; k++) koff[k] = ox_offset(nk, kidx, kstr + k * nk);
  if (!cols) {
    const int64_t run = rdims[nr - 1];
    int64_t st[nin];
    for (int32_t k = 0; k < nin; k++) st[k] = rstr[k * nr + nr - 1];
    for (int64_t o = ostart; o < oend; o++) {
      ox_acc stack[64], leaf, acc = m->ident;
      int sp = 0;
      uint64_t cnt = 0;
      for (int32_t d = 0; d < nr; d++) ridx[d] = 0;
      for (int32_t k = 0; k < nin; k++) roff[k] = koff[k];
      for (int64_t i = 0; i < rtotal; i += run) {
        for (int32_t k = 0; k < nin; k++)
          if (st[k] == 0)
            ox_gather(buf[k], (const unsigned char *)inp[k] + roff[k] * r->isz[k],
                      run < OX_BLK ? run : OX_BLK, 0, r->isz[k]);
        for (int64_t s = 0; s < run; s += OX_BLK) {
          const int64_t n = run - s < OX_BLK ? run - s : OX_BLK;
          for (int32_t k = 0; k < nin; k++)
            p[k] = ox_block((const unsigned char *)inp[k] + roff[k] * r->isz[k], st[k], s, n,
                            r->isz[k], buf[k]);
          const void *v = p[0];
          if (r->vals) { bad |= r->vals(n, vp, p); v = vals; }
          m->leaf(n, v, &leaf);
          for (uint64_t c = cnt++; c & 1; c >>= 1) m->comb(1, &stack[--sp], &leaf);
          stack[sp++] = leaf;
        }
        ox_advance(run, nr, rdims, ridx, nin, roff, rstr);
      }
      if (sp > 0) {
        acc = stack[sp - 1];
        for (int q = sp - 2; q >= 0; q--) m->comb(1, &stack[q], &acc);
      }
      unsigned char *dst = (unsigned char *)outp + o * m->osz;
      if (m->fin) m->fin(1, &acc, dst); else ox_put(dst, &acc, m->osz);
      ox_advance(1, nk, kdims, kidx, nin, koff, kstr);
    }
    return bad;
  }
  OX_ALIGNED ox_acc leafv[OX_CBLK];
  OX_ALIGNED ox_acc cst[48][OX_CBLK];
  const int64_t kin = kdims[nk - 1];
  int64_t st[nin];
  for (int32_t k = 0; k < nin; k++) st[k] = kstr[k * nk + nk - 1];
  for (int64_t o = ostart; o < oend;) {
    int64_t n = kin - kidx[nk - 1];
    if (n > oend - o) n = oend - o;
    if (n > OX_CBLK) n = OX_CBLK;
    int csp = 0, rows = 0;
    uint64_t ccnt = 0;
    ox_gather(leafv, (const unsigned char *)&m->ident, n, 0, m->asz);
    for (int32_t d = 0; d < nr; d++) ridx[d] = 0;
    for (int32_t k = 0; k < nin; k++) roff[k] = koff[k];
    for (int64_t row = 0; row < rtotal; row++) {
      for (int32_t k = 0; k < nin; k++) {
        const unsigned char *base = (const unsigned char *)inp[k] + roff[k] * r->isz[k];
        if (st[k] == 0) ox_gather(buf[k], base, n, 0, r->isz[k]);
        p[k] = ox_block(base, st[k], 0, n, r->isz[k], buf[k]);
      }
      const void *v = p[0];
      if (r->vals) { bad |= r->vals(n, vp, p); v = vals; }
      m->push(n, v, leafv);
      if (++rows == OX_LEAF_ROWS || row + 1 == rtotal) {
        for (uint64_t c = ccnt++; c & 1; c >>= 1) m->comb(n, cst[--csp], leafv);
        memcpy(cst[csp++], leafv, (size_t)(n * m->asz));
        ox_gather(leafv, (const unsigned char *)&m->ident, n, 0, m->asz);
        rows = 0;
      }
      ox_advance(1, nr, rdims, ridx, nin, roff, rstr);
    }
    memcpy(leafv, cst[csp - 1], (size_t)(n * m->asz));
    for (int q = csp - 2; q >= 0; q--) m->comb(n, cst[q], leafv);
    unsigned char *dst = (unsigned char *)outp + o * m->osz;
    if (m->fin) m->fin(n, leafv, dst); else memcpy(dst, leafv, (size_t)(n * m->osz));
    o += n;
    ox_advance(n, nk, kdims, kidx, nin, koff, kstr);
  }
  return bad; }
"#;

/// The drivers' translation unit.
pub(crate) fn source() -> String {
    format!("{HEADER}{API}{DRIVERS}")
}
