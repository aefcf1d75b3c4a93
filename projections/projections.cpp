#include "projections/projections.h"

#include <filesystem>

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

Status Projections::ReadViews(const std::string& projector,
                              const std::function<Status(ViewReader&)>& read) {
  return engine_->Read(projector, read);
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

Status ProjectionState::ReadViews(const std::string& projector,
                                  const std::function<Status(ViewReader&)>& read) {
  CAIRN_ASSIGN_OR_RETURN(Part * part, Find(projector));
  return read(part->store);
}

Result<std::string> ProjectionState::Digest(const std::string& projection) {
  CAIRN_ASSIGN_OR_RETURN(Part * part, Find(projection));
  return projections::DigestViews(part->store);
}

}  // namespace cairn
