#include "projections/task_order_projector.h"

namespace cairn::projections {

namespace {

constexpr std::string_view kOrderPrefix = "order/";
constexpr std::string_view kIndexedPrefix = "task/";

std::string TypePrefix(events::TaskType type) {
  std::string key(kOrderPrefix);
  AppendBigEndian32(&key, static_cast<uint32_t>(type));
  return key;
}

}  // namespace

Status TaskOrderProjector::Apply(const Envelope& event, ViewStore& store) const {
  if (!event.has_task_submitted() || event.task_submitted().task_id().empty()) {
    return Status::Ok();
  }
  const auto& submitted = event.task_submitted();
  std::string indexed(kIndexedPrefix);
  indexed += submitted.task_id();
  CAIRN_ASSIGN_OR_RETURN(auto known, store.Get(indexed));
  if (known) return Status::Ok();  // a task is submitted once; a repeat changes nothing
  std::string key = TypePrefix(submitted.spec().task_type());
  AppendBigEndian64(&key, event.offset());
  CAIRN_RETURN_IF_ERROR(store.Put(key, submitted.task_id()));
  return store.Put(indexed, "");
}

Status VisitTaskIdsInOrder(ViewReader& reader, events::TaskType type,
                           const std::function<bool(const std::string& task_id)>& visit) {
  return reader.Scan(TypePrefix(type), [&](std::string_view, std::string_view value) {
    return visit(std::string(value));
  });
}

}  // namespace cairn::projections
