#include "projections/projections.h"

#include <filesystem>

#include "projections/agent_projector.h"
#include "projections/experiment_projector.h"
#include "projections/job_queue_projector.h"
#include "projections/task_projector.h"

namespace cairn {

using projections::ViewReader;

Result<std::unique_ptr<Projections>> Projections::Open(const std::string& dir, EventLog* log,
                                                       projections::EngineOptions options) {
  CAIRN_ASSIGN_OR_RETURN(auto engine,
                         projections::ProjectionEngine::Open(dir, log, std::move(options)));
  engine->Start();
  return std::unique_ptr<Projections>(new Projections(std::move(engine)));
}

Projections::~Projections() { Stop(); }

void Projections::Stop() { engine_->Stop(); }

namespace {

// Reads `projection` through `read` into a value of type T.
template <typename T, typename Read>
Result<T> ReadFrom(projections::ProjectionEngine& engine, const std::string& projection,
                   Read read) {
  T value;
  CAIRN_RETURN_IF_ERROR(engine.Read(projection, [&](ViewReader& reader) {
    CAIRN_ASSIGN_OR_RETURN(value, read(reader));
    return Status::Ok();
  }));
  return value;
}

}  // namespace

Result<std::optional<TaskView>> Projections::GetTask(const std::string& task_id) {
  return ReadFrom<std::optional<TaskView>>(
      *engine_, projections::kTasksProjector,
      [&](ViewReader& reader) { return projections::ReadTask(reader, task_id); });
}

Result<std::vector<TaskView>> Projections::ListTasks() {
  return ReadFrom<std::vector<TaskView>>(
      *engine_, projections::kTasksProjector,
      [](ViewReader& reader) { return projections::ReadTasks(reader); });
}

Result<std::vector<AgentView>> Projections::ListAgents() {
  return ReadFrom<std::vector<AgentView>>(
      *engine_, projections::kAgentsProjector,
      [](ViewReader& reader) { return projections::ReadAgents(reader); });
}

Result<std::vector<JobView>> Projections::JobQueue(const std::string& pool) {
  return ReadFrom<std::vector<JobView>>(
      *engine_, projections::kJobQueueProjector,
      [&](ViewReader& reader) { return projections::ReadJobQueue(reader, pool); });
}

Result<std::optional<ExperimentView>> Projections::GetExperiment(int64_t experiment_id) {
  return ReadFrom<std::optional<ExperimentView>>(
      *engine_, projections::kExperimentsProjector,
      [&](ViewReader& reader) { return projections::ReadExperiment(reader, experiment_id); });
}

Result<std::vector<ExperimentView>> Projections::ListExperiments() {
  return ReadFrom<std::vector<ExperimentView>>(
      *engine_, projections::kExperimentsProjector,
      [](ViewReader& reader) { return projections::ReadExperiments(reader); });
}

Result<std::vector<TrialView>> Projections::ListTrials(int64_t experiment_id) {
  return ReadFrom<std::vector<TrialView>>(
      *engine_, projections::kExperimentsProjector,
      [&](ViewReader& reader) { return projections::ReadTrials(reader, experiment_id); });
}

Result<std::optional<TrialView>> Projections::GetTrial(int64_t trial_id) {
  return ReadFrom<std::optional<TrialView>>(
      *engine_, projections::kExperimentsProjector,
      [&](ViewReader& reader) { return projections::ReadTrial(reader, trial_id); });
}

Result<std::vector<WorkloadView>> Projections::ListWorkloads(int64_t trial_id) {
  return ReadFrom<std::vector<WorkloadView>>(
      *engine_, projections::kExperimentsProjector,
      [&](ViewReader& reader) { return projections::ReadWorkloads(reader, trial_id); });
}

Result<std::vector<CheckpointView>> Projections::ListCheckpoints(int64_t experiment_id,
                                                                 int64_t trial_id) {
  return ReadFrom<std::vector<CheckpointView>>(
      *engine_, projections::kExperimentsProjector, [&](ViewReader& reader) {
        return projections::ReadCheckpointViews(reader, experiment_id, trial_id);
      });
}

Result<std::optional<CheckpointView>> Projections::GetCheckpoint(const std::string& uuid) {
  return ReadFrom<std::optional<CheckpointView>>(
      *engine_, projections::kExperimentsProjector,
      [&](ViewReader& reader) { return projections::ReadCheckpointView(reader, uuid); });
}

uint64_t Projections::AppliedOffset() const { return engine_->AppliedOffset(); }

Status Projections::WaitForOffset(uint64_t offset, std::chrono::milliseconds timeout) {
  return engine_->WaitForOffset(offset, timeout);
}

Result<std::string> Projections::Digest(const std::string& projection) {
  CAIRN_ASSIGN_OR_RETURN(auto summary, engine_->Summarize(projection));
  return summary.digest;
}

Result<projections::ProjectionSummary> Projections::Summary(const std::string& projection) {
  return engine_->Summarize(projection);
}

Result<std::vector<projections::ProjectionSummary>> RebuildProjections(
    const std::string& out_dir, EventLog* log, const std::vector<std::string>& names,
    std::optional<uint64_t> last_offset, size_t max_batch_events) {
  std::error_code error;
  if (std::filesystem::exists(out_dir, error) && !std::filesystem::is_empty(out_dir, error)) {
    return Status::FailedPrecondition("rebuild needs a fresh directory; " + out_dir +
                                      " is not empty");
  }
  projections::EngineOptions options;
  if (!names.empty()) options.projectors = names;
  options.max_batch_events = max_batch_events;
  CAIRN_ASSIGN_OR_RETURN(auto engine, projections::ProjectionEngine::Open(out_dir, log, options));
  CAIRN_RETURN_IF_ERROR(engine->CatchUp(last_offset));
  std::vector<projections::ProjectionSummary> summaries;
  for (const auto& name : options.projectors) {
    CAIRN_ASSIGN_OR_RETURN(auto summary, engine->Summarize(name));
    summaries.push_back(std::move(summary));
  }
  return summaries;
}

struct ProjectionState::Part {
  std::unique_ptr<projections::Projector> projector;
  projections::MemoryViewStore store;
  views::ProjectorCheckpoint checkpoint;
};

ProjectionState::ProjectionState() {
  for (const auto& name : projections::ProjectorNames()) {
    auto part = std::make_unique<Part>();
    part->projector = std::move(projections::MakeProjector(name)).value();
    parts_.push_back(std::move(part));
  }
}

ProjectionState::~ProjectionState() = default;
ProjectionState::ProjectionState(ProjectionState&&) noexcept = default;
ProjectionState& ProjectionState::operator=(ProjectionState&&) noexcept = default;

Status ProjectionState::Apply(const events::Envelope& event) {
  for (auto& part : parts_) {
    CAIRN_RETURN_IF_ERROR(
        projections::ApplyEvent(*part->projector, event, part->store, part->checkpoint));
  }
  return Status::Ok();
}

uint64_t ProjectionState::next_offset() const { return parts_.front()->checkpoint.next_offset(); }

Result<ProjectionState::Part*> ProjectionState::Find(const std::string& projection) {
  for (auto& part : parts_) {
    if (part->projector->name() == projection) return part.get();
  }
  return Status::InvalidArgument("unknown projection '" + projection + "'");
}

Result<std::optional<TaskView>> ProjectionState::GetTask(const std::string& task_id) {
  CAIRN_ASSIGN_OR_RETURN(Part * part, Find(projections::kTasksProjector));
  return projections::ReadTask(part->store, task_id);
}

Result<std::vector<TaskView>> ProjectionState::ListTasks() {
  CAIRN_ASSIGN_OR_RETURN(Part * part, Find(projections::kTasksProjector));
  return projections::ReadTasks(part->store);
}

Result<std::vector<AgentView>> ProjectionState::ListAgents() {
  CAIRN_ASSIGN_OR_RETURN(Part * part, Find(projections::kAgentsProjector));
  return projections::ReadAgents(part->store);
}

Result<std::vector<JobView>> ProjectionState::JobQueue(const std::string& pool) {
  CAIRN_ASSIGN_OR_RETURN(Part * part, Find(projections::kJobQueueProjector));
  return projections::ReadJobQueue(part->store, pool);
}

Result<std::optional<ExperimentView>> ProjectionState::GetExperiment(int64_t experiment_id) {
  CAIRN_ASSIGN_OR_RETURN(Part * part, Find(projections::kExperimentsProjector));
  return projections::ReadExperiment(part->store, experiment_id);
}

Result<std::vector<ExperimentView>> ProjectionState::ListExperiments() {
  CAIRN_ASSIGN_OR_RETURN(Part * part, Find(projections::kExperimentsProjector));
  return projections::ReadExperiments(part->store);
}

Result<std::vector<TrialView>> ProjectionState::ListTrials(int64_t experiment_id) {
  CAIRN_ASSIGN_OR_RETURN(Part * part, Find(projections::kExperimentsProjector));
  return projections::ReadTrials(part->store, experiment_id);
}

Result<std::optional<TrialView>> ProjectionState::GetTrial(int64_t trial_id) {
  CAIRN_ASSIGN_OR_RETURN(Part * part, Find(projections::kExperimentsProjector));
  return projections::ReadTrial(part->store, trial_id);
}

Result<std::vector<WorkloadView>> ProjectionState::ListWorkloads(int64_t trial_id) {
  CAIRN_ASSIGN_OR_RETURN(Part * part, Find(projections::kExperimentsProjector));
  return projections::ReadWorkloads(part->store, trial_id);
}

Result<std::vector<CheckpointView>> ProjectionState::ListCheckpoints(int64_t experiment_id,
                                                                     int64_t trial_id) {
  CAIRN_ASSIGN_OR_RETURN(Part * part, Find(projections::kExperimentsProjector));
  return projections::ReadCheckpointViews(part->store, experiment_id, trial_id);
}

Result<std::optional<CheckpointView>> ProjectionState::GetCheckpoint(const std::string& uuid) {
  CAIRN_ASSIGN_OR_RETURN(Part * part, Find(projections::kExperimentsProjector));
  return projections::ReadCheckpointView(part->store, uuid);
}

Result<std::string> ProjectionState::Digest(const std::string& projection) {
  CAIRN_ASSIGN_OR_RETURN(Part * part, Find(projection));
  return projections::DigestViews(part->store);
}

}  // namespace cairn
