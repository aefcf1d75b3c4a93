// The `cairn` operator tool. Today it has one command group: `cairn replay`.
#include <iostream>
#include <string>
#include <vector>

#include "replay/replay_tool.h"

namespace {

const char kUsage[] = R"(usage: cairn <command> [args]

commands:
  replay    tools over the event log: dump, rebuild, digest, state, explain
            (see 'cairn replay --help')
)";

}  // namespace

int main(int argc, char** argv) {
  std::vector<std::string> args(argv + 1, argv + argc);
  if (args.empty()) {
    std::cerr << kUsage;
    return 2;
  }
  if (args[0] == "--help" || args[0] == "-h" || args[0] == "help") {
    std::cout << kUsage;
    return 0;
  }
  if (args[0] == "replay") {
    return cairn::replay::RunReplay(std::vector<std::string>(args.begin() + 1, args.end()),
                                    std::cout, std::cerr);
  }
  std::cerr << "cairn: unknown command '" << args[0] << "'\n\n" << kUsage;
  return 2;
}
