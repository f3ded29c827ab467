// trainscope-openblas-gemm: the OpenBLAS reference of `trainscope bench`, run by the bench as a child process, once
// per OpenBLAS core type (OpenBLAS reads OPENBLAS_CORETYPE once, when the library loads, so each core type needs a
// process of its own). Linked to OpenBLAS; trainscope itself never is.
//
//   trainscope-openblas-gemm REPEATS MIN_SECONDS wall|cpu FORM:M:N:K...
// FORM: forward (C = A·Bᵀ), backward_data (C = A·B), backward_weight (C = Aᵀ·B), row-major as the training kernels
// lay them out. Threads: OPENBLAS_NUM_THREADS, set by the bench. Prints, one per line:
//   core NAME            openblas_get_corename(): the kernels OpenBLAS actually runs
//   config TEXT          openblas_get_config()
//   threads N            openblas_get_num_threads()
//   row FORM M N K MS    median milliseconds per cblas_sgemm call (app/bench_timing.hpp; cpu: the calling
//                        thread's CPU time, meaningful with OPENBLAS_NUM_THREADS=1 only)
#include <cblas.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "app/bench_timing.hpp"

int main(int argc, char** argv) {
  if (argc < 4 || (std::strcmp(argv[3], "wall") != 0 && std::strcmp(argv[3], "cpu") != 0)) {
    std::fprintf(stderr, "usage: %s REPEATS MIN_SECONDS wall|cpu FORM:M:N:K...\n", argv[0]);
    return 2;
  }
  const int repeats = std::atoi(argv[1]);
  const double min_seconds = std::atof(argv[2]);
  const app::BenchClock clock = std::strcmp(argv[3], "cpu") == 0 ? app::BenchClock::ThreadCpu : app::BenchClock::Wall;
  std::printf("core %s\nconfig %s\nthreads %d\n", openblas_get_corename(), openblas_get_config(),
              openblas_get_num_threads());
  std::fflush(stdout);
  for (int i = 4; i < argc; ++i) {
    char form[32] = {};
    long M = 0, N = 0, K = 0;
    if (std::sscanf(argv[i], "%31[a-z_]:%ld:%ld:%ld", form, &M, &N, &K) != 4 || M < 1 || N < 1 || K < 1) {
      std::fprintf(stderr, "bad shape %s (FORM:M:N:K)\n", argv[i]);
      return 2;
    }
    const std::string f = form;
    // Operands as the training kernels hold them: forward A (M,K), B (N,K); backward data A (M,K), B (K,N);
    // backward weight A (K,M), B (K,N). Filled with small values (the speed does not depend on them).
    std::vector<float> a(static_cast<size_t>(M * K)), b(static_cast<size_t>(K * N)), c(static_cast<size_t>(M * N));
    for (size_t j = 0; j < a.size(); ++j) a[j] = static_cast<float>(j % 17) * 0.01f;
    for (size_t j = 0; j < b.size(); ++j) b[j] = static_cast<float>(j % 13) * 0.01f;
    auto call = [&] {
      if (f == "forward")
        cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, M, N, K, 1.0f, a.data(), K, b.data(), K, 0.0f, c.data(),
                    N);
      else if (f == "backward_data")
        cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, M, N, K, 1.0f, a.data(), K, b.data(), N, 0.0f,
                    c.data(), N);
      else
        cblas_sgemm(CblasRowMajor, CblasTrans, CblasNoTrans, M, N, K, 1.0f, a.data(), M, b.data(), N, 0.0f, c.data(),
                    N);
    };
    if (f != "forward" && f != "backward_data" && f != "backward_weight") {
      std::fprintf(stderr, "bad form %s\n", form);
      return 2;
    }
    const app::TimedCalls t = app::time_calls(call, repeats, min_seconds, clock);
    std::printf("row %s %ld %ld %ld %.6f\n", form, M, N, K, t.median_ms);
    std::fflush(stdout);
  }
  return 0;
}
