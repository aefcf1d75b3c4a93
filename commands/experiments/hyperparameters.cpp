#include "commands/experiments/hyperparameters.h"

#include <algorithm>
#include <cmath>
#include <functional>

#include "base/yaml_json.h"

namespace cairn::experiments {

namespace {

// Grids multiply quickly; a typo in a count should be an error, not an out-of-memory master.
constexpr size_t kMaxGridPoints = 100000;

// min + i * (max - min) / (c - 1) for i in [0, c), with the last point exactly max.
std::vector<double> EvenlySpaced(double minval, double maxval, int count) {
  if (count <= 1) return {(minval + maxval) / 2};
  std::vector<double> points;
  points.reserve(static_cast<size_t>(count));
  for (int i = 0; i < count; ++i) {
    points.push_back(i == count - 1 ? maxval : minval + i * (maxval - minval) / (count - 1));
  }
  return points;
}

struct Leaf {
  std::vector<std::string> route;  // names from the top of the space down to the leaf
  std::vector<nlohmann::json> values;
};

Status CollectLeaves(const HyperparameterSpace& space, std::vector<std::string>& route,
                     std::vector<Leaf>& leaves) {
  for (const auto& member : space) {
    route.push_back(member.name);
    if (member.type == HyperparameterType::kNested && !member.members.empty()) {
      CAIRN_RETURN_IF_ERROR(CollectLeaves(member.members, route, leaves));
    } else {
      std::string path = "hyperparameters";
      for (const auto& name : route) path = ChildPath(path, name);
      CAIRN_ASSIGN_OR_RETURN(auto values, GridAxis(member, path));
      leaves.push_back({route, std::move(values)});
    }
    route.pop_back();
  }
  return Status::Ok();
}

void SetAt(nlohmann::json& point, const std::vector<std::string>& route,
           const nlohmann::json& value) {
  nlohmann::json* node = &point;
  for (size_t i = 0; i + 1 < route.size(); ++i) node = &(*node)[route[i]];
  (*node)[route.back()] = value;
}

uint64_t Rotl(uint64_t x, int k) { return (x << k) | (x >> (64 - k)); }

void Flatten(const nlohmann::json& value, const std::string& prefix, std::string& out) {
  if (value.is_object() && !value.empty()) {
    for (const auto& [key, child] : value.items()) Flatten(child, ChildPath(prefix, key), out);
    return;
  }
  if (!out.empty()) out += ", ";
  out += prefix + "=" + (value.is_string() ? value.get<std::string>() : value.dump());
}

}  // namespace

const char* HyperparameterTypeName(HyperparameterType type) {
  switch (type) {
    case HyperparameterType::kConst:
      return "const";
    case HyperparameterType::kInt:
      return "int";
    case HyperparameterType::kDouble:
      return "double";
    case HyperparameterType::kLog:
      return "log";
    case HyperparameterType::kCategorical:
      return "categorical";
    case HyperparameterType::kNested:
      return "nested";
  }
  return "unknown";
}

nlohmann::json SpaceToJson(const HyperparameterSpace& space) {
  nlohmann::json out = nlohmann::json::object();
  for (const auto& member : space) {
    nlohmann::json entry;
    switch (member.type) {
      case HyperparameterType::kNested:
        out[member.name] = SpaceToJson(member.members);
        continue;
      case HyperparameterType::kConst:
        entry = {{"type", "const"}, {"val", member.val}};
        break;
      case HyperparameterType::kInt:
        entry = {{"type", "int"},
                 {"minval", static_cast<int64_t>(member.minval)},
                 {"maxval", static_cast<int64_t>(member.maxval)}};
        break;
      case HyperparameterType::kDouble:
        entry = {{"type", "double"}, {"minval", member.minval}, {"maxval", member.maxval}};
        break;
      case HyperparameterType::kLog:
        entry = {{"type", "log"},
                 {"minval", member.minval},
                 {"maxval", member.maxval},
                 {"base", member.base}};
        break;
      case HyperparameterType::kCategorical:
        entry = {{"type", "categorical"}, {"vals", member.vals}};
        break;
    }
    if (member.count) entry["count"] = *member.count;
    out[member.name] = std::move(entry);
  }
  return out;
}

Result<std::vector<nlohmann::json>> GridAxis(const Hyperparameter& hyperparameter,
                                             const std::string& path) {
  const auto& h = hyperparameter;
  switch (h.type) {
    case HyperparameterType::kConst:
      return std::vector<nlohmann::json>{h.val};
    case HyperparameterType::kCategorical:
      return h.vals;
    case HyperparameterType::kNested:
      // Only an empty nested map reaches here: it is one value, {}.
      return std::vector<nlohmann::json>{nlohmann::json::object()};
    default:
      break;
  }
  if (!h.count) {
    return Status::InvalidArgument(path + ": grid search is in use but count was not provided");
  }
  std::vector<nlohmann::json> values;
  if (h.type == HyperparameterType::kInt) {
    // Fewer points than integers in the range: more would only repeat values after rounding.
    const double range = h.maxval - h.minval + 1;
    const int count = static_cast<int>(std::min<double>(*h.count, range));
    for (double point : EvenlySpaced(h.minval, h.maxval, count)) {
      const auto rounded = static_cast<int64_t>(std::round(point));
      if (values.empty() || values.back() != rounded) values.push_back(rounded);
    }
    return values;
  }
  for (double point : EvenlySpaced(h.minval, h.maxval, *h.count)) {
    values.push_back(h.type == HyperparameterType::kLog ? std::pow(h.base, point) : point);
  }
  return values;
}

Result<std::vector<nlohmann::json>> GridPoints(const HyperparameterSpace& space) {
  std::vector<Leaf> leaves;
  std::vector<std::string> route;
  CAIRN_RETURN_IF_ERROR(CollectLeaves(space, route, leaves));
  size_t total = 1;
  for (const auto& leaf : leaves) {
    total *= leaf.values.size();
    if (total > kMaxGridPoints) {
      return Status::InvalidArgument("hyperparameters: the grid has more than " +
                                     std::to_string(kMaxGridPoints) + " points; lower the counts");
    }
  }
  std::vector<nlohmann::json> points;
  points.reserve(total);
  // Mixed-radix counting with the last leaf as the fastest digit.
  std::vector<size_t> digits(leaves.size(), 0);
  for (size_t n = 0; n < total; ++n) {
    nlohmann::json point = nlohmann::json::object();
    for (size_t i = 0; i < leaves.size(); ++i) {
      SetAt(point, leaves[i].route, leaves[i].values[digits[i]]);
    }
    points.push_back(std::move(point));
    for (size_t i = leaves.size(); i-- > 0;) {
      if (++digits[i] < leaves[i].values.size()) break;
      digits[i] = 0;
    }
  }
  return points;
}

Rng::Rng(uint64_t seed) {
  // splitmix64 spreads any seed, including 0, over the whole xoshiro state.
  uint64_t x = seed;
  for (auto& word : state_) {
    uint64_t z = (x += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    word = z ^ (z >> 31);
  }
}

uint64_t Rng::Next() {
  const uint64_t result = Rotl(state_[1] * 5, 7) * 9;
  const uint64_t t = state_[1] << 17;
  state_[2] ^= state_[0];
  state_[3] ^= state_[1];
  state_[1] ^= state_[2];
  state_[0] ^= state_[3];
  state_[2] ^= t;
  state_[3] = Rotl(state_[3], 45);
  return result;
}

double Rng::Uniform01() { return static_cast<double>(Next() >> 11) * 0x1.0p-53; }

int64_t Rng::UniformInt(int64_t low, int64_t high) {
  const uint64_t range = static_cast<uint64_t>(high) - static_cast<uint64_t>(low) + 1;
  if (range == 0) return static_cast<int64_t>(Next());  // the whole 64-bit range
  // Reject the lowest (2^64 mod range) values so that every residue is equally likely.
  const uint64_t threshold = (0 - range) % range;
  uint64_t x;
  do {
    x = Next();
  } while (x < threshold);
  return static_cast<int64_t>(static_cast<uint64_t>(low) + x % range);
}

nlohmann::json SampleSpace(const HyperparameterSpace& space, Rng& rng) {
  nlohmann::json point = nlohmann::json::object();
  for (const auto& h : space) {
    switch (h.type) {
      case HyperparameterType::kConst:
        point[h.name] = h.val;
        break;
      case HyperparameterType::kInt:
        point[h.name] =
            rng.UniformInt(static_cast<int64_t>(h.minval), static_cast<int64_t>(h.maxval));
        break;
      case HyperparameterType::kDouble:
        point[h.name] = h.minval + (h.maxval - h.minval) * rng.Uniform01();
        break;
      case HyperparameterType::kLog:
        point[h.name] = std::pow(h.base, h.minval + (h.maxval - h.minval) * rng.Uniform01());
        break;
      case HyperparameterType::kCategorical:
        point[h.name] =
            h.vals[static_cast<size_t>(rng.UniformInt(0, static_cast<int64_t>(h.vals.size()) - 1))];
        break;
      case HyperparameterType::kNested:
        point[h.name] = SampleSpace(h.members, rng);
        break;
    }
  }
  return point;
}

nlohmann::json ExplorePoint(const HyperparameterSpace& space, const nlohmann::json& old,
                            double resample_probability, double perturb_factor, Rng& rng) {
  nlohmann::json point = nlohmann::json::object();
  for (const auto& h : space) {
    const nlohmann::json* before = nullptr;
    if (old.is_object()) {
      auto found = old.find(h.name);
      if (found != old.end()) before = &*found;
    }
    if (h.type == HyperparameterType::kNested) {
      point[h.name] = ExplorePoint(h.members, before ? *before : nlohmann::json(),
                                   resample_probability, perturb_factor, rng);
      continue;
    }
    const bool numeric = h.type == HyperparameterType::kInt ||
                         h.type == HyperparameterType::kDouble ||
                         h.type == HyperparameterType::kLog;
    if (rng.Uniform01() < resample_probability || before == nullptr ||
        (numeric && !before->is_number())) {
      point[h.name] = SampleSpace({h}, rng)[h.name];
      continue;
    }
    if (!numeric) {
      point[h.name] = *before;
      continue;
    }
    const bool decrease = rng.Uniform01() < 0.5;
    const double scaled =
        before->get<double>() * (decrease ? 1 - perturb_factor : 1 + perturb_factor);
    if (h.type == HyperparameterType::kInt) {
      const double rounded = decrease ? std::floor(scaled) : std::ceil(scaled);
      point[h.name] = static_cast<int64_t>(std::clamp(rounded, h.minval, h.maxval));
    } else if (h.type == HyperparameterType::kDouble) {
      point[h.name] = std::clamp(scaled, h.minval, h.maxval);
    } else {
      point[h.name] = std::clamp(scaled, std::pow(h.base, h.minval), std::pow(h.base, h.maxval));
    }
  }
  return point;
}

std::string DescribePoint(const nlohmann::json& point) {
  std::string out;
  if (point.is_object()) {
    for (const auto& [key, value] : point.items()) Flatten(value, key, out);
  }
  return out.empty() ? "(no hyperparameters)" : out;
}

}  // namespace cairn::experiments
