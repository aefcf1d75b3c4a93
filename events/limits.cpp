#include "events/limits.h"

#include <cctype>

namespace cairn {

std::string PriorityRangeText() {
  return "between " + std::to_string(kMinPriority) + " and " + std::to_string(kMaxPriority);
}

bool IsSafeId(const std::string& id) {
  if (id.empty() || id.size() > kMaxIdLength) return false;
  for (char c : id) {
    if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '_' || c == '.')) {
      return false;
    }
  }
  return true;
}

std::string SafeIdRuleText() {
  return "letters, digits, '-', '_', '.'; at most " + std::to_string(kMaxIdLength);
}

}  // namespace cairn
