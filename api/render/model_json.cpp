#include "api/render/model_json.h"

#include "api/render/experiment_json.h"
#include "base/clock.h"
#include "events/workspace_defaults.h"

namespace cairn::api {

using nlohmann::json;

namespace {

template <typename Labels>
json LabelsOf(const Labels& labels) {
  json list = json::array();
  for (const auto& label : labels) list.push_back(label);
  return list;
}

}  // namespace

json ModelJson(const views::ModelView& model) {
  return {{"id", model.id()},
          {"name", model.name()},
          {"description", model.description()},
          {"labels", LabelsOf(model.labels())},
          {"metadata", JsonObjectOf(model.metadata_json())},
          {"notes", model.notes()},
          {"workspaceId", WorkspaceOrUncategorized(model.workspace_id())},
          {"userId", model.user_id()},
          {"username", model.username()},
          {"archived", model.archived()},
          {"numVersions", model.versions_size()},
          {"creationTime", FormatRfc3339(model.creation_time_unix_micros())},
          {"lastUpdatedTime", FormatRfc3339(model.last_updated_time_unix_micros())}};
}

json ModelVersionJson(const views::ModelVersionView& version, const views::ModelView& model,
                      json checkpoint) {
  return {{"id", version.id()},
          {"version", version.version()},
          {"model", ModelJson(model)},
          {"checkpoint", std::move(checkpoint)},
          {"name", version.name()},
          {"comment", version.comment()},
          {"notes", version.notes()},
          {"metadata", JsonObjectOf(version.metadata_json())},
          {"labels", LabelsOf(version.labels())},
          {"userId", version.user_id()},
          {"username", version.username()},
          {"creationTime", FormatRfc3339(version.creation_time_unix_micros())},
          {"lastUpdatedTime", FormatRfc3339(version.last_updated_time_unix_micros())}};
}

}  // namespace cairn::api
