// The hyperparameter search space of an experiment (Determined's five types and nested maps), the
// points of a grid over it, and random samples from it. Values are JSON: an int hyperparameter
// gives a JSON integer, double and log give JSON floats, const and categorical give their values
// as written, a nested map gives a JSON object. Pure: sampling draws only from the Rng passed in.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "base/status.h"

namespace cairn::experiments {

enum class HyperparameterType { kConst, kInt, kDouble, kLog, kCategorical, kNested };

// "const", "int", "double", "log", "categorical", "nested".
const char* HyperparameterTypeName(HyperparameterType type);

struct Hyperparameter {
  std::string name;  // the key in its map
  HyperparameterType type = HyperparameterType::kConst;
  nlohmann::json val;  // kConst
  // kInt (integral values), kDouble, kLog (exponents of `base`); minval < maxval.
  double minval = 0;
  double maxval = 0;
  double base = 10;                     // kLog
  std::optional<int> count;             // kInt, kDouble, kLog: grid points along this axis
  std::vector<nlohmann::json> vals;     // kCategorical: non-empty
  std::vector<Hyperparameter> members;  // kNested: sorted by name
};

// A map of hyperparameters, sorted by name (Determined iterates names in sorted order, which makes
// grids and samples independent of the order of the YAML file).
using HyperparameterSpace = std::vector<Hyperparameter>;

// The space in Determined's expanded form: every member as {"type": ..., ...}, nested maps as maps.
nlohmann::json SpaceToJson(const HyperparameterSpace& space);

// The values of one grid axis. int: c = min(count, maxval-minval+1) points, evenly spaced and
// inclusive of both ends, rounded half away from zero (c == 1: the rounded midpoint). double and
// log likewise without rounding (log: base^point). categorical: every value in order. const: its
// value. Fails with InvalidArgument naming `path` when an int/double/log has no count.
Result<std::vector<nlohmann::json>> GridAxis(const Hyperparameter& hyperparameter,
                                             const std::string& path);

// Every grid point: the cartesian product of the axes (nested maps contribute one axis per leaf)
// in sorted-name order, the first axis varying slowest. An empty space gives one point, {}.
Result<std::vector<nlohmann::json>> GridPoints(const HyperparameterSpace& space);

// xoshiro256** seeded through splitmix64: the same seed gives the same numbers on every platform
// and compiler, which std:: distributions do not promise. Not thread-safe.
class Rng {
 public:
  explicit Rng(uint64_t seed);
  uint64_t Next();
  // Uniform in [0, 1) with 53 random bits.
  double Uniform01();
  // Uniform integer in [low, high], both inclusive; low <= high.
  int64_t UniformInt(int64_t low, int64_t high);

 private:
  uint64_t state_[4];
};

// One random point: int uniform in [minval, maxval], double uniform in [minval, maxval), log
// base^uniform(minval, maxval), categorical a uniform pick, const its value; members in sorted-name
// order so that the draws are stable.
nlohmann::json SampleSpace(const HyperparameterSpace& space, Rng& rng);

// A point "near" `old` (population-based training's explore step): each member, in sorted-name
// order, is drawn anew with probability `resample_probability`; otherwise an int, double or log
// is scaled by 1 - perturb_factor or 1 + perturb_factor (even odds; an int rounds down when
// scaled down and up when scaled up) and clamped to its range (a log's range is base^minval ..
// base^maxval); const and categorical members keep their values; nested maps recurse. A member
// missing from `old` or not a number there is drawn anew.
nlohmann::json ExplorePoint(const HyperparameterSpace& space, const nlohmann::json& old,
                            double resample_probability, double perturb_factor, Rng& rng);

// "layers=2, lr=0.01, optimizer.momentum=0.9": a point flattened with dotted names, for the
// reasons of searcher decisions.
std::string DescribePoint(const nlohmann::json& point);

}  // namespace cairn::experiments
