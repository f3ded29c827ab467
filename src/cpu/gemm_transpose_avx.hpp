// The transposing copy of the GEMM's packing (gemm.cpp), with AVX 8x8 transposes: included only by the files that
// are compiled with AVX2 or AVX-512 flags (gemm_avx2.cpp, gemm_avx512.cpp), inside their anonymous namespace, so
// each gets its own copy with internal linkage and nothing compiled for a wider instruction set leaks elsewhere.
//
// d[k * ldd + j] = s[j * lds + k] for j < rows, k < cols (rows <= ldd). The 8x8 transpose is the unpack / shuffle
// sequence with the 128-bit lane crossing done by the loads (Intel 64 and IA-32 Optimization Reference Manual, "8x8
// matrix transpose", its variant with vinsertf128 from memory); partial blocks load the missing rows as zeros and
// store only `rows` lanes (but see `dense` below).
// Needs <immintrin.h>, included by the including file before its namespace.
#pragma once

// The 8 x 8 block at s (rows i < n of 8 floats, lds apart; rows from n on read as zeros), transposed into r: the
// lane crossing done by the loads (row i's and row i + 4's halves of 4 floats loaded into one register), so that
// only 16 in-lane unpacks and shuffles remain instead of 24 shuffles and permutes. Measured on a Zen 4 core, with
// the whole-vector stores of transpose_blocks: a 128 x 256 operand packed as 6-row panels 5.3 -> 3.9 us, as
// 16-column panels 3.6 -> 3.3 us.
template <int N>  // N > 0: n = N, known when compiled (no test per load); N = 0: n at run time
inline void transpose_8x8_load(const float* s, long lds, long n_run, __m256 r[8]) {
  const long n = N > 0 ? N : n_run;
  const __m128 zero = _mm_setzero_ps();
  __m256 h[8];  // h[i]: k 0..3 (i < 4) or 4..7 (i >= 4) of rows i % 4 (low half) and i % 4 + 4 (high half)
  for (int i = 0; i < 4; ++i) {
    const float* lo = s + i * lds;
    const float* hi = s + (i + 4) * lds;
    const __m128 lo0 = i < n ? _mm_loadu_ps(lo) : zero, lo1 = i < n ? _mm_loadu_ps(lo + 4) : zero;
    const __m128 hi0 = i + 4 < n ? _mm_loadu_ps(hi) : zero, hi1 = i + 4 < n ? _mm_loadu_ps(hi + 4) : zero;
    h[i] = _mm256_insertf128_ps(_mm256_castps128_ps256(lo0), hi0, 1);
    h[i + 4] = _mm256_insertf128_ps(_mm256_castps128_ps256(lo1), hi1, 1);
  }
  for (int g = 0; g < 8; g += 4) {  // a 4 x 4 transpose within each 128-bit lane
    const __m256 t0 = _mm256_unpacklo_ps(h[g], h[g + 1]), t1 = _mm256_unpackhi_ps(h[g], h[g + 1]);
    const __m256 t2 = _mm256_unpacklo_ps(h[g + 2], h[g + 3]), t3 = _mm256_unpackhi_ps(h[g + 2], h[g + 3]);
    r[g] = _mm256_shuffle_ps(t0, t2, 0x44);
    r[g + 1] = _mm256_shuffle_ps(t0, t2, 0xEE);
    r[g + 2] = _mm256_shuffle_ps(t1, t3, 0x44);
    r[g + 3] = _mm256_shuffle_ps(t1, t3, 0xEE);
  }
}

// Blocks k0 in [k_begin, k_end) (multiples of 8) of N rows, every store whole (N = 8, or a dense panel, below).
template <int N>
inline void transpose_blocks(float* d, long ldd, const float* s, long lds, long k_begin, long k_end) {
  for (long k0 = k_begin; k0 < k_end; k0 += 8) {
    __m256 r[8];
    transpose_8x8_load<N>(s + k0, lds, N, r);
    for (int k = 0; k < 8; ++k) _mm256_storeu_ps(d + (k0 + k) * ldd, r[k]);
  }
}

inline void transpose_avx(float* d, long ldd, const float* s, long lds, long rows, long cols) {
  const long full_k = cols / 8 * 8;
  // A panel narrower than a vector and stored densely (A's 6-row micro-panels, B's 5-column panels of the column
  // tile: rows = ldd, 4 to 7): a whole-vector store of row k writes its lanes past `rows` over the start of row k + 1,
  // which a later store (k ascending, or the tail loop) writes again; so every block but one whose last row is the
  // panel's last can store whole vectors. A masked store (vmaskmovps) is many times slower than a plain one on AMD's
  // cores: with it, A's packing was about 6% of a 512 GEMM, B's a third of the output layer's forward.
  const bool dense = rows == ldd && rows >= 4 && rows < 8;
  for (long j0 = 0; j0 < rows; j0 += 8) {
    const long nj = rows - j0 < 8 ? rows - j0 : 8;
    long k0 = 0;
    if (nj == 8) {
      transpose_blocks<8>(d + j0, ldd, s + j0 * lds, lds, 0, full_k);
      k0 = full_k;
    } else if (dense) {
      k0 = full_k < cols || full_k == 0 ? full_k : full_k - 8;  // the blocks whose stores stay inside d
      switch (nj) {
        case 4: transpose_blocks<4>(d, ldd, s, lds, 0, k0); break;
        case 5: transpose_blocks<5>(d, ldd, s, lds, 0, k0); break;
        case 6: transpose_blocks<6>(d, ldd, s, lds, 0, k0); break;
        default: transpose_blocks<7>(d, ldd, s, lds, 0, k0); break;
      }
    }
    // Lanes [0, nj) of a store: all-ones in the sign bit selects a lane of _mm256_maskstore_ps.
    const __m256i store_mask = _mm256_cmpgt_epi32(_mm256_set1_epi32(static_cast<int>(nj)),
                                                  _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7));
    for (; k0 < full_k; k0 += 8) {
      __m256 r[8];
      transpose_8x8_load<0>(s + j0 * lds + k0, lds, nj, r);
      for (int k = 0; k < 8; ++k) _mm256_maskstore_ps(d + (k0 + k) * ldd + j0, store_mask, r[k]);
    }
    for (long k = full_k; k < cols; ++k)
      for (long j = j0; j < j0 + nj; ++j) d[k * ldd + j] = s[j * lds + k];
  }
}
