#include "projections/task_order_projector.h"

#include <algorithm>
#include <charconv>

#include "events/envelope_util.h"

namespace cairn::projections {

namespace {

constexpr std::string_view kOrderPrefix = "order/";
constexpr std::string_view kIndexedPrefix = "task/";
constexpr std::string_view kChangedPrefix = "changed/";

std::string TypePrefix(events::TaskType type) {
  std::string key(kOrderPrefix);
  AppendBigEndian32(&key, static_cast<uint32_t>(type));
  return key;
}

// The list a task belongs to: its type and its user.
std::string ListOf(events::TaskType type, const std::string& user) {
  std::string list;
  AppendBigEndian32(&list, static_cast<uint32_t>(type));
  list += user;
  return list;
}

Status MarkChanged(ViewStore& store, std::string_view list, uint64_t offset) {
  std::string key(kChangedPrefix);
  key += list;
  return store.Put(key, std::to_string(offset));
}

// An event about a task already indexed: its list's version moves.
Status OnTaskEvent(const std::string& task_id, uint64_t offset, ViewStore& store) {
  std::string indexed(kIndexedPrefix);
  indexed += task_id;
  CAIRN_ASSIGN_OR_RETURN(auto list, store.Get(indexed));
  if (!list) return Status::Ok();
  return MarkChanged(store, *list, offset);
}

}  // namespace

Status TaskOrderProjector::Apply(const Envelope& event, ViewStore& store) const {
  // A job's change reaches the views of its tasks; the tasks lists version are those whose job
  // id is their own (commands, notebooks, shells and TensorBoards submitted through the API).
  if (event.has_job_queue_changed()) {
    return OnTaskEvent(event.job_queue_changed().job_id(), event.offset(), store);
  }
  if (!event.has_task_submitted()) {
    const std::string& task_id = TaskIdOf(event);
    return task_id.empty() ? Status::Ok() : OnTaskEvent(task_id, event.offset(), store);
  }
  const auto& submitted = event.task_submitted();
  if (submitted.task_id().empty()) return Status::Ok();
  std::string indexed(kIndexedPrefix);
  indexed += submitted.task_id();
  CAIRN_ASSIGN_OR_RETURN(auto known, store.Get(indexed));
  if (known) return Status::Ok();  // a task is submitted once; a repeat changes nothing
  std::string key = TypePrefix(submitted.spec().task_type());
  AppendBigEndian64(&key, event.offset());
  CAIRN_RETURN_IF_ERROR(store.Put(key, submitted.task_id()));
  const std::string list = ListOf(submitted.spec().task_type(), submitted.spec().user());
  CAIRN_RETURN_IF_ERROR(store.Put(indexed, list));
  return MarkChanged(store, list, event.offset());
}

Result<uint64_t> ReadTaskListVersion(ViewReader& reader, events::TaskType type,
                                     const std::vector<std::string>& users) {
  uint64_t version = 0;
  auto take = [&](std::string_view value) {
    uint64_t offset = 0;
    std::from_chars(value.data(), value.data() + value.size(), offset);
    version = std::max(version, offset);
  };
  const std::string prefix = std::string(kChangedPrefix) + ListOf(type, "");
  if (users.empty()) {
    CAIRN_RETURN_IF_ERROR(reader.Scan(prefix, [&](std::string_view, std::string_view value) {
      take(value);
      return true;
    }));
    return version;
  }
  for (const auto& user : users) {
    CAIRN_ASSIGN_OR_RETURN(auto value, reader.Get(prefix + user));
    if (value) take(*value);
  }
  return version;
}

Status VisitTaskIdsInOrder(ViewReader& reader, events::TaskType type,
                           const std::function<bool(const std::string& task_id)>& visit) {
  return reader.Scan(TypePrefix(type), [&](std::string_view, std::string_view value) {
    return visit(std::string(value));
  });
}

}  // namespace cairn::projections
