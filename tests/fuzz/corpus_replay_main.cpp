// The main() of a fuzz target in the normal (g++) build: runs the target once on each file named
// on the command line, and on every file under each directory named, so ctest can replay the
// committed corpus (tests/fuzz/corpus/<target>/) on every CI run without clang. A crash or a
// failed FUZZ_CHECK fails the run; libFuzzer's own options (-runs=0 ...) are ignored.
#include <algorithm>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <iterator>
#include <string>
#include <vector>

#include "tests/fuzz/fuzz_support.h"

int main(int argc, char** argv) {
  std::vector<std::filesystem::path> inputs;
  for (int i = 1; i < argc; ++i) {
    const std::string argument = argv[i];
    if (argument.starts_with("-")) continue;
    if (std::filesystem::is_directory(argument)) {
      for (const auto& entry : std::filesystem::recursive_directory_iterator(argument)) {
        if (entry.is_regular_file()) inputs.push_back(entry.path());
      }
    } else {
      inputs.emplace_back(argument);
    }
  }
  // A stable order, so a failing run names the same input first every time.
  std::sort(inputs.begin(), inputs.end());
  if (inputs.empty()) {
    std::cerr << argv[0] << ": no input files\n";
    return 2;
  }
  for (const auto& path : inputs) {
    std::ifstream file(path, std::ios::binary);
    if (!file) {
      std::cerr << argv[0] << ": cannot read " << path << "\n";
      return 2;
    }
    const std::string bytes((std::istreambuf_iterator<char>(file)),
                            std::istreambuf_iterator<char>());
    // Announced first, so the input is named even if the target crashes on it.
    std::cerr << "replaying " << path.string() << "\n";
    LLVMFuzzerTestOneInput(reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size());
  }
  std::cout << argv[0] << ": replayed " << inputs.size() << " inputs\n";
  return 0;
}
