// The transposing copy of the GEMM's packing (gemm.cpp), with AVX 8x8 transposes: included only by the files that
// are compiled with AVX2 or AVX-512 flags (gemm_avx2.cpp, gemm_avx512.cpp), inside their anonymous namespace, so
// each gets its own copy with internal linkage and nothing compiled for a wider instruction set leaks elsewhere.
//
// d[k * ldd + j] = s[j * lds + k] for j < rows, k < cols (rows <= ldd). The 8x8 transpose is the usual
// unpack / shuffle / permute2f128 sequence (Intel 64 and IA-32 Optimization Reference Manual, "8x8 matrix
// transpose"); partial blocks load the missing rows as zeros and store only `rows` lanes (see `dense` below).
// Needs <immintrin.h>, included by the including file before its namespace.
#pragma once

inline void transpose_8x8(__m256 r[8]) {
  const __m256 t0 = _mm256_unpacklo_ps(r[0], r[1]), t1 = _mm256_unpackhi_ps(r[0], r[1]);
  const __m256 t2 = _mm256_unpacklo_ps(r[2], r[3]), t3 = _mm256_unpackhi_ps(r[2], r[3]);
  const __m256 t4 = _mm256_unpacklo_ps(r[4], r[5]), t5 = _mm256_unpackhi_ps(r[4], r[5]);
  const __m256 t6 = _mm256_unpacklo_ps(r[6], r[7]), t7 = _mm256_unpackhi_ps(r[6], r[7]);
  const __m256 s0 = _mm256_shuffle_ps(t0, t2, 0x44), s1 = _mm256_shuffle_ps(t0, t2, 0xEE);
  const __m256 s2 = _mm256_shuffle_ps(t1, t3, 0x44), s3 = _mm256_shuffle_ps(t1, t3, 0xEE);
  const __m256 s4 = _mm256_shuffle_ps(t4, t6, 0x44), s5 = _mm256_shuffle_ps(t4, t6, 0xEE);
  const __m256 s6 = _mm256_shuffle_ps(t5, t7, 0x44), s7 = _mm256_shuffle_ps(t5, t7, 0xEE);
  r[0] = _mm256_permute2f128_ps(s0, s4, 0x20);
  r[1] = _mm256_permute2f128_ps(s1, s5, 0x20);
  r[2] = _mm256_permute2f128_ps(s2, s6, 0x20);
  r[3] = _mm256_permute2f128_ps(s3, s7, 0x20);
  r[4] = _mm256_permute2f128_ps(s0, s4, 0x31);
  r[5] = _mm256_permute2f128_ps(s1, s5, 0x31);
  r[6] = _mm256_permute2f128_ps(s2, s6, 0x31);
  r[7] = _mm256_permute2f128_ps(s3, s7, 0x31);
}

inline void transpose_avx(float* d, long ldd, const float* s, long lds, long rows, long cols) {
  const long full_k = cols / 8 * 8;
  // A panel narrower than a vector and stored densely (A's 6-row micro-panels: rows = ldd = 6): a whole-vector store
  // of row k writes its lanes past `rows` over the start of row k + 1, which a later store (k ascending, or the tail
  // loop) writes again, so only a store that would pass the end of d needs the mask. A masked store
  // (vmaskmovps) is many times slower than a plain one on AMD's cores: it made A's packing about 6% of a 512 GEMM.
  const bool dense = rows == ldd && rows < 8;
  for (long j0 = 0; j0 < rows; j0 += 8) {
    const long nj = rows - j0 < 8 ? rows - j0 : 8;
    // Lanes [0, nj) of a store: all-ones in the sign bit selects a lane of _mm256_maskstore_ps.
    const __m256i store_mask = _mm256_cmpgt_epi32(_mm256_set1_epi32(static_cast<int>(nj)),
                                                  _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7));
    for (long k0 = 0; k0 < full_k; k0 += 8) {
      __m256 r[8];
      for (int i = 0; i < 8; ++i) r[i] = i < nj ? _mm256_loadu_ps(s + (j0 + i) * lds + k0) : _mm256_setzero_ps();
      transpose_8x8(r);
      for (int k = 0; k < 8; ++k) {
        float* out = d + (k0 + k) * ldd + j0;
        if (nj == 8 || (dense && (k0 + k) * ldd + 8 <= cols * ldd)) _mm256_storeu_ps(out, r[k]);
        else _mm256_maskstore_ps(out, store_mask, r[k]);
      }
    }
    for (long k = full_k; k < cols; ++k)
      for (long j = j0; j < j0 + nj; ++j) d[k * ldd + j] = s[j * lds + k];
  }
}
