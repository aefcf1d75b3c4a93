#include "replay/flags.h"

#include <regex>

#include "base/clock.h"
#include "events/envelope_util.h"

namespace cairn::replay {

Result<Flags> Flags::Parse(const std::vector<std::string>& args,
                           const std::set<std::string>& known) {
  Flags flags;
  for (size_t i = 0; i < args.size(); ++i) {
    const std::string& arg = args[i];
    if (arg == "--help" || arg == "-h") {
      flags.help_ = true;
      continue;
    }
    if (arg.rfind("--", 0) != 0 || arg.size() == 2) {
      return Status::InvalidArgument("unexpected argument '" + arg + "'");
    }
    std::string name = arg.substr(2);
    std::optional<std::string> value;
    if (size_t equals = name.find('='); equals != std::string::npos) {
      value = name.substr(equals + 1);
      name.resize(equals);
    }
    if (known.count(name) == 0) return Status::InvalidArgument("unknown flag --" + name);
    if (flags.values_.count(name) > 0) {
      return Status::InvalidArgument("flag --" + name + " given twice");
    }
    if (!value) {
      if (i + 1 >= args.size()) return Status::InvalidArgument("flag --" + name + " needs a value");
      value = args[++i];
    }
    if (value->empty()) return Status::InvalidArgument("flag --" + name + " has an empty value");
    flags.values_[name] = *value;
  }
  return flags;
}

std::optional<std::string> Flags::Get(const std::string& name) const {
  auto it = values_.find(name);
  if (it == values_.end()) return std::nullopt;
  return it->second;
}

Result<std::optional<uint64_t>> Flags::GetUint(const std::string& name) const {
  auto text = Get(name);
  if (!text) return std::optional<uint64_t>();
  const std::string& digits = *text;
  bool all_digits = digits.find_first_not_of("0123456789") == std::string::npos;
  if (!all_digits || digits.size() > 19) {
    return Status::InvalidArgument("flag --" + name + " wants a non-negative integer, not '" +
                                   digits + "'");
  }
  return std::optional<uint64_t>(std::stoull(digits));
}

Result<std::optional<int64_t>> Flags::GetTime(const std::string& name) const {
  auto text = Get(name);
  if (!text) return std::optional<int64_t>();
  // std::regex recurses per character: an unbounded value would exhaust the stack. No valid time
  // is near this long.
  constexpr size_t kMaxTimeChars = 64;
  if (text->size() > kMaxTimeChars) {
    return Status::InvalidArgument("flag --" + name + " wants RFC 3339 or unix seconds, not a " +
                                   std::to_string(text->size()) + "-character value");
  }
  // Checked here first: the shared parser expects a well-formed zone offset.
  static const std::regex kShape(
      R"(\d+|\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?([Zz]|[+-]\d{2}:\d{2})?)");
  if (!std::regex_match(*text, kShape)) {
    return Status::InvalidArgument("flag --" + name +
                                   " wants RFC 3339 (2025-03-20T12:00:00Z) or unix seconds, not '" +
                                   *text + "'");
  }
  auto micros = ParseTimeToUnixMicros(*text);
  if (!micros.ok()) {
    return Status::InvalidArgument("flag --" + name + ": " + micros.status().message());
  }
  return std::optional<int64_t>(*micros);
}

}  // namespace cairn::replay
