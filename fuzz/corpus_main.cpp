// main() of the fuzz targets' plain builds (scripts/test): runs the target's LLVMFuzzerTestOneInput once on every
// file of the folders and files given (its seed corpus, fuzz/corpus/TARGET), so that the targets are compiled and
// linked by every build and their promises checked on every input, without clang or libFuzzer. A broken promise
// aborts, as under libFuzzer; the exit code is 0 when every input passed, 1 when a path could not be read.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size);

int main(int argc, char** argv) {
  namespace fs = std::filesystem;
  std::vector<fs::path> inputs;
  for (int i = 1; i < argc; ++i) {
    std::error_code ec;
    if (fs::is_directory(argv[i], ec)) {
      for (const auto& entry : fs::directory_iterator(argv[i], ec))
        if (entry.is_regular_file()) inputs.push_back(entry.path());
    } else if (fs::is_regular_file(argv[i], ec)) {
      inputs.push_back(argv[i]);
    } else {
      std::fprintf(stderr, "%s: %s is neither a folder nor a file\n", argv[0], argv[i]);
      return 1;
    }
  }
  std::sort(inputs.begin(), inputs.end());  // the same order on every machine
  for (const fs::path& p : inputs) {
    std::ifstream in(p, std::ios::binary);
    const std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    std::fprintf(stderr, "%s\n", p.filename().string().c_str());  // the input a crash belongs to
    LLVMFuzzerTestOneInput(reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size());
  }
  std::printf("%s: %zu inputs, every promise kept\n", argv[0], inputs.size());
  return inputs.empty() ? 1 : 0;
}
