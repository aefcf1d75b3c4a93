#include "api/handlers/checkpoints.h"

#include <algorithm>
#include <filesystem>
#include <functional>
#include <map>

#include "api/checkpoint_objects.h"
#include "api/handlers/experiment_common.h"
#include "api/render/experiment_json.h"
#include "api/rest_util.h"
#include "base/ids.h"
#include "base/log.h"
#include "base/tar_gz.h"
#include "commands/experiments/experiment_config.h"

namespace cairn::api {

using nlohmann::json;

namespace {

// The checkpoint and the experiment it belongs to, as the caller may see them (a checkpoint of
// an experiment the caller cannot see does not exist for them).
struct LoadedCheckpoint {
  views::CheckpointView checkpoint;
  views::ExperimentView experiment;
  std::optional<views::TrialView> trial;
};

// The checkpoint with its experiment and trial; nullopt when any is missing. `check_visibility`:
// also nullopt when the caller may not see the experiment.
Result<std::optional<LoadedCheckpoint>> FindCheckpoint(Call& call, const std::string& uuid,
                                                       bool check_visibility) {
  if (!IsCanonicalUuid(uuid)) return std::optional<LoadedCheckpoint>();
  Projections* projections = call.services().projections;
  CAIRN_ASSIGN_OR_RETURN(auto checkpoint, projections->GetCheckpoint(uuid));
  if (!checkpoint) return std::optional<LoadedCheckpoint>();
  // Read straight from the projection: a deleted experiment's checkpoint a model version keeps
  // is still shown.
  CAIRN_ASSIGN_OR_RETURN(auto experiment, projections->GetExperiment(checkpoint->experiment_id()));
  if (!experiment || (check_visibility && !call.CanView(experiment->workspace_id()))) {
    return std::optional<LoadedCheckpoint>();
  }
  // A deleted experiment's checkpoints went with it, but for those a model version kept.
  if (experiment->deleted() && checkpoint->state() == views::CHECKPOINT_STATE_DELETED) {
    return std::optional<LoadedCheckpoint>();
  }
  CAIRN_ASSIGN_OR_RETURN(auto trial, projections->GetTrial(checkpoint->trial_id()));
  return std::optional<LoadedCheckpoint>(
      LoadedCheckpoint{std::move(*checkpoint), std::move(*experiment), std::move(trial)});
}

Result<LoadedCheckpoint> LoadCheckpoint(Call& call, const std::string& uuid) {
  CAIRN_ASSIGN_OR_RETURN(auto found, FindCheckpoint(call, uuid, /*check_visibility=*/true));
  if (!found) return Status::NotFound("checkpoint " + uuid + " not found");
  return std::move(*found);
}

// A checkpoint's experiment config, for Determined's `det checkpoint download`, which reads the
// storage from it: withheld credentials are left out rather than shown as "********", so that the
// CLI tries the user's own credentials and else downloads through the master.
json CheckpointExperimentConfig(Call& call, const views::ExperimentView& experiment) {
  json config = ExperimentConfigJson(experiment, call.AudienceFor(experiment.owner()));
  auto storage = config.find("checkpoint_storage");
  if (storage != config.end() && storage->is_object()) {
    for (auto& [key, value] : storage->items()) {
      if (value.is_string() && value.get<std::string>() == kRedactedValue) value = nullptr;
    }
  }
  return config;
}

json Render(Call& call, const LoadedCheckpoint& loaded) {
  const json config = CheckpointExperimentConfig(call, loaded.experiment);
  return CheckpointJson(loaded.checkpoint, {&config, loaded.trial ? &*loaded.trial : nullptr});
}

std::optional<double> SearcherMetric(const views::CheckpointView& checkpoint) {
  if (!checkpoint.has_validation() || !checkpoint.validation().has_searcher_metric()) {
    return std::nullopt;
  }
  return checkpoint.validation().searcher_metric();
}

// Determined's checkpoint orders (checkpointv1SortBy). Searcher metric: best first, those
// without one last; the rest ascending. ORDER_BY_DESC reverses either.
Status SortCheckpoints(std::vector<views::CheckpointView>& checkpoints, const std::string& sort_by,
                       const std::string& order_by, bool smaller_is_better) {
  const bool descending = order_by == "ORDER_BY_DESC";
  if (!order_by.empty() && order_by != "ORDER_BY_ASC" && !descending &&
      order_by != "ORDER_BY_UNSPECIFIED") {
    return Status::InvalidArgument("orderBy: ORDER_BY_ASC or ORDER_BY_DESC, not " + order_by);
  }
  using Less = std::function<bool(const views::CheckpointView&, const views::CheckpointView&)>;
  Less less;
  if (sort_by.empty() || sort_by == "SORT_BY_UNSPECIFIED" || sort_by == "SORT_BY_END_TIME") {
    less = [](const auto& a, const auto& b) { return a.saved_offset() < b.saved_offset(); };
  } else if (sort_by == "SORT_BY_UUID") {
    less = [](const auto& a, const auto& b) { return a.uuid() < b.uuid(); };
  } else if (sort_by == "SORT_BY_TRIAL_ID") {
    less = [](const auto& a, const auto& b) { return a.trial_id() < b.trial_id(); };
  } else if (sort_by == "SORT_BY_BATCH_NUMBER") {
    less = [](const auto& a, const auto& b) { return a.total_batches() < b.total_batches(); };
  } else if (sort_by == "SORT_BY_STATE") {
    less = [](const auto& a, const auto& b) { return a.state() < b.state(); };
  } else if (sort_by == "SORT_BY_SEARCHER_METRIC") {
    less = [smaller_is_better](const auto& a, const auto& b) {
      auto x = SearcherMetric(a);
      auto y = SearcherMetric(b);
      if (!x || !y) return x.has_value() && !y.has_value();
      return smaller_is_better ? *x < *y : *x > *y;
    };
  } else {
    return Status::InvalidArgument("sortByAttr: unknown order " + sort_by);
  }
  std::stable_sort(checkpoints.begin(), checkpoints.end(), [&](const auto& a, const auto& b) {
    return descending ? less(b, a) : less(a, b);
  });
  return Status::Ok();
}

}  // namespace

net::Response ListCheckpointsOf(Call& call, const std::string& id,
                                std::optional<int64_t> trial_id) {
  auto experiment = LoadExperiment(call, id);
  if (!experiment.ok()) return Error(experiment.status());
  auto paging = call.ReadPaging();
  if (!paging.ok()) return Error(paging.status());
  Projections* projections = call.services().projections;
  auto checkpoints =
      projections->ListCheckpoints(experiment->experiment_id(), trial_id.value_or(0));
  if (!checkpoints.ok()) return Error(checkpoints.status());
  const net::Request& request = call.request();
  if (Status sorted =
          SortCheckpoints(*checkpoints, request.QueryParam("sortByAttr"),
                          request.QueryParam("orderBy"), experiment->smaller_is_better());
      !sorted.ok()) {
    return Error(sorted);
  }
  auto [page, pagination] = Page(std::move(*checkpoints), *paging);
  // Only the page's trials, and the configuration rendered once for all of its checkpoints.
  std::map<int64_t, std::optional<views::TrialView>> trials;
  for (const auto& checkpoint : page) {
    if (trials.count(checkpoint.trial_id())) continue;
    auto trial = projections->GetTrial(checkpoint.trial_id());
    if (!trial.ok()) return Error(trial.status());
    trials[checkpoint.trial_id()] = std::move(*trial);
  }
  const json config = CheckpointExperimentConfig(call, *experiment);
  json list = json::array();
  for (const auto& checkpoint : page) {
    const auto& trial = trials.at(checkpoint.trial_id());
    list.push_back(CheckpointJson(checkpoint, {&config, trial ? &*trial : nullptr}));
  }
  return Ok({{"checkpoints", list}, {"pagination", pagination}});
}

Result<std::optional<json>> CheckpointWithTrainingJson(Call& call, const std::string& uuid) {
  CAIRN_ASSIGN_OR_RETURN(auto found, FindCheckpoint(call, uuid, /*check_visibility=*/false));
  if (!found) return std::optional<json>();
  return std::optional<json>(Render(call, *found));
}

namespace {

// A checkpoint as a tar.gz answer, streamed: `add` puts entry `index` (named `paths[index]`) into
// the archive. Once the status line is sent, a failure can only cut the stream; it is logged.
net::Response CheckpointArchive(
    const std::string& uuid, std::vector<std::string> paths,
    std::function<Status(TarGzWriter& archive, size_t index, const std::string& path)> add) {
  net::Response response;
  response.content_type = "application/gzip";
  response.stream = [uuid, paths = std::move(paths),
                     add = std::move(add)](const net::ChunkWriter& write) {
    TarGzWriter archive([&write](std::string_view bytes) { return write(bytes); },
                        TarGzWriter::Compression::kStore);
    for (size_t index = 0; index < paths.size(); ++index) {
      if (Status added = add(archive, index, paths[index]); !added.ok()) {
        log::Warn("api", "download of checkpoint {} stopped at {}: {}", uuid, paths[index],
                  added.message());
        return;
      }
    }
    if (Status finished = archive.Finish(); !finished.ok()) {
      log::Warn("api", "download of checkpoint {} stopped: {}", uuid, finished.message());
    }
  };
  return response;
}

// The checkpoint's objects as a tar.gz, streamed through the master a piece at a time.
net::Response DownloadFromObjectStore(const experiments::CheckpointStorageConfig& storage,
                                      const std::string& uuid, const SecretSealer& sealer) {
  auto opened = OpenCheckpointObjects(storage, sealer);
  if (!opened.ok()) return Error(opened.status());
  auto objects = std::make_shared<CheckpointObjects>(std::move(*opened));
  const std::string prefix = CheckpointKeyPrefix(*objects, uuid);
  // Listed before the answer starts, so that a missing checkpoint is a 404, not a broken stream.
  auto listed = objects->store->List(prefix);
  if (!listed.ok()) return Error(listed.status());
  if (listed->empty()) {
    return Error(Status::NotFound("checkpoint " + uuid + " has no objects in its " + storage.type +
                                  " storage"));
  }
  std::vector<std::string> paths;
  for (const net::StoredObject& object : *listed) paths.push_back(object.key.substr(prefix.size()));
  return CheckpointArchive(uuid, std::move(paths),
                           [objects, listed = std::move(*listed)](
                               TarGzWriter& archive, size_t index, const std::string& path) {
                             if (path.empty())
                               return Status::Ok();  // a marker for the checkpoint itself
                             if (path.back() == '/') return archive.AddDirectory(path);
                             const net::StoredObject& object = listed[index];
                             return archive.AddFileFromPieces(
                                 path, 0644, object.size, [&](uint64_t offset, uint64_t length) {
                                   return objects->store->ReadRange(object.key, offset, length);
                                 });
                           });
}

}  // namespace

net::Response GetCheckpointRoute(Call& call) {
  auto loaded = LoadCheckpoint(call, call.Param("uuid"));
  if (!loaded.ok()) return Error(loaded.status());
  return Ok({{"checkpoint", Render(call, *loaded)}});
}

net::Response DownloadCheckpoint(Call& call) {
  const std::string& uuid = call.Param("uuid");
  auto loaded = LoadCheckpoint(call, uuid);
  if (!loaded.ok()) return Error(loaded.status());
  if (loaded->checkpoint.state() == views::CHECKPOINT_STATE_DELETED) {
    return Error(Status::NotFound("checkpoint " + uuid + " was deleted (" +
                                  loaded->checkpoint.delete_reason() + ")"));
  }
  auto config = experiments::ParseExperimentConfig(loaded->experiment.config_json());
  if (!config.ok()) return Error(config.status());
  if (config->checkpoint_storage && config->checkpoint_storage->IsObjectStore()) {
    return DownloadFromObjectStore(*config->checkpoint_storage, uuid, call.services().sealer);
  }
  const std::string root = experiments::CheckpointDirectory(*config);
  if (root.empty()) return Error(Status::NotFound("experiment has no checkpoint storage"));
  const std::filesystem::path directory = std::filesystem::path(root) / uuid;
  std::error_code error;
  // The directory itself, not what a link in its place (a trial wrote it) points at.
  if (!std::filesystem::is_directory(std::filesystem::symlink_status(directory, error))) {
    return Error(Status::NotFound("checkpoint " + uuid + " has no files at " + directory.string() +
                                  " on the master's host"));
  }
  const std::string within = std::filesystem::canonical(directory, error).string();
  if (error) return Error(Status::IOError("cannot resolve " + directory.string()));
  // The files, collected before the answer starts so that a missing directory is a 404, not a
  // broken stream. Symbolic links are left out: the master serves the checkpoint's own files,
  // never what a link inside it points at.
  std::vector<std::pair<std::string, bool>> entries;  // relative path, is a directory
  for (auto it = std::filesystem::recursive_directory_iterator(directory, error);
       !error && it != std::filesystem::recursive_directory_iterator(); it.increment(error)) {
    if (it->is_symlink()) {
      it.disable_recursion_pending();
      continue;
    }
    if (!it->is_directory() && !it->is_regular_file()) continue;
    entries.emplace_back(std::filesystem::relative(it->path(), directory).generic_string(),
                         it->is_directory());
  }
  if (error)
    return Error(Status::IOError("cannot list " + directory.string() + ": " + error.message()));
  std::sort(entries.begin(), entries.end());
  std::vector<std::string> paths;
  std::vector<bool> directories;
  for (const auto& [path, is_directory] : entries) {
    paths.push_back(path);
    directories.push_back(is_directory);
  }
  return CheckpointArchive(uuid, std::move(paths),
                           [directory, within, directories = std::move(directories)](
                               TarGzWriter& archive, size_t index, const std::string& path) {
                             return directories[index]
                                        ? archive.AddDirectory(path)
                                        : archive.AddFileFromDisk(path, (directory / path).string(),
                                                                  within);
                           });
}

net::Response DeleteCheckpointsRoute(Call& call) {
  auto body = call.Body();
  if (!body.ok()) return Error(body.status());
  if (Status known = CheckKnownKeys(*body, "", {"checkpointUuids"}, {}); !known.ok()) {
    return Error(known);
  }
  const json uuids = body->value("checkpointUuids", json());
  if (!uuids.is_array() || uuids.empty()) {
    return Error(Status::InvalidArgument("checkpointUuids: a list of checkpoint uuids"));
  }
  commands::DeleteCheckpoints command;
  for (const auto& uuid : uuids) {
    if (!uuid.is_string()) {
      return Error(Status::InvalidArgument("checkpointUuids: a list of checkpoint uuids"));
    }
    // A checkpoint the caller cannot see is not found, before the write side says more.
    auto loaded = LoadCheckpoint(call, uuid.get<std::string>());
    if (!loaded.ok()) return Error(loaded.status());
    command.uuids.push_back(uuid.get<std::string>());
  }
  auto outcome = call.ExecuteAndShow(std::move(command));
  if (!outcome.ok()) return Error(outcome.status());
  return Ok(json::object(), outcome->offset);
}

}  // namespace cairn::api
