// The model registry's commands (commands/registry/model_registry.h). The edge has resolved a
// model's name to its id and parsed metadata into JSON object text; the decider checks names,
// references and limits. Decided by commands/registry/registry_decider.h.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace cairn::commands {

// The model registry (commands/registry/model_registry.h). The edge has resolved a model's name to
// its id and parsed metadata into JSON object text; the decider checks names, references and
// limits.
struct CreateModel {
  static constexpr const char* kName = "CreateModel";
  std::string name;
  std::string description;
  std::vector<std::string> labels;
  std::string metadata_json = "{}";
  std::string notes;
  int32_t workspace_id = 1;
};

// Unset fields keep their value; archive and unarchive set `archived`, a move `workspace_id`.
struct UpdateModel {
  static constexpr const char* kName = "UpdateModel";
  int32_t model_id = 0;
  std::optional<std::string> name{};
  std::optional<std::string> description{};
  std::optional<std::vector<std::string>> labels{};
  std::optional<std::string> metadata_json{};
  std::optional<std::string> notes{};
  std::optional<bool> archived{};
  std::optional<int32_t> workspace_id{};
};

// With its versions: only by its owner or an admin.
struct DeleteModel {
  static constexpr const char* kName = "DeleteModel";
  int32_t model_id = 0;
};

struct RegisterModelVersion {
  static constexpr const char* kName = "RegisterModelVersion";
  int32_t model_id = 0;
  std::string checkpoint_uuid;
  std::string name;
  std::string comment;
  std::string notes;
  std::string metadata_json = "{}";
  std::vector<std::string> labels;
};

struct UpdateModelVersion {
  static constexpr const char* kName = "UpdateModelVersion";
  int32_t model_id = 0;
  int32_t version = 0;
  std::optional<std::string> name{};
  std::optional<std::string> comment{};
  std::optional<std::string> notes{};
  std::optional<std::string> metadata_json{};
  std::optional<std::vector<std::string>> labels{};
};

struct DeleteModelVersion {
  static constexpr const char* kName = "DeleteModelVersion";
  int32_t model_id = 0;
  int32_t version = 0;
};

}  // namespace cairn::commands
