// A strict command-line flag parser for the replay tools: "--name value" or "--name=value",
// each flag at most once, only the flags a subcommand declares. Every mistake is an
// InvalidArgument whose message can be shown to the operator as is.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "base/status.h"

namespace cairn::replay {

class Flags {
 public:
  // Parses `args` (the words after the subcommand) against the `known` flag names (without
  // dashes). "--help" / "-h" set help().
  static Result<Flags> Parse(const std::vector<std::string>& args,
                             const std::set<std::string>& known);

  bool help() const { return help_; }
  bool has(const std::string& name) const { return values_.count(name) > 0; }
  std::optional<std::string> Get(const std::string& name) const;
  // An unsigned decimal number, or InvalidArgument naming the flag.
  Result<std::optional<uint64_t>> GetUint(const std::string& name) const;
  // RFC 3339 or unix seconds, as unix microseconds.
  Result<std::optional<int64_t>> GetTime(const std::string& name) const;

 private:
  bool help_ = false;
  std::map<std::string, std::string> values_;
};

}  // namespace cairn::replay
