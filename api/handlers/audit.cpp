#include "api/handlers/audit.h"

#include <limits>

#include "api/responses.h"
#include "api/rest_util.h"
#include "replay/replay_tool.h"

namespace cairn::api {
namespace {

constexpr size_t kDefaultLimit = 1000;
constexpr size_t kMaxLimit = 10000;

}  // namespace

net::Response ListAudit(Call& call) {
  if (Status admin = call.RequireAdmin("read the audit trail"); !admin.ok()) return Error(admin);
  const net::Request& request = call.request();
  replay::AuditQuery query;
  query.actor = request.QueryParam("actor");
  query.entity = request.QueryParam("entity");
  auto since = OptionalTimeParam(request, "since");
  if (!since.ok()) return Error(since.status());
  auto until = OptionalTimeParam(request, "until");
  if (!until.ok()) return Error(until.status());
  query.since_micros = *since;
  query.until_micros = *until;
  const std::string include_system = request.QueryParam("includeSystem");
  if (!include_system.empty() && include_system != "true" && include_system != "false") {
    return Error(Status::InvalidArgument("includeSystem: expected true or false"));
  }
  query.include_system = include_system == "true";
  auto limit_param = CountParam(request, "limit", kDefaultLimit, 1, kMaxLimit);
  if (!limit_param.ok()) return Error(limit_param.status());
  const size_t limit = *limit_param;
  // CountParam's largest number; absent, toOffset is the log's end however long the log is.
  constexpr size_t kLargestOffset = 999'999'999;
  auto from_offset = CountParam(request, "fromOffset", 0, 0, kLargestOffset);
  if (!from_offset.ok()) return Error(from_offset.status());
  auto to_offset =
      CountParam(request, "toOffset", std::numeric_limits<size_t>::max(), 0, kLargestOffset);
  if (!to_offset.ok()) return Error(to_offset.status());
  nlohmann::json records = nlohmann::json::array();
  bool truncated = false;
  Status scanned = replay::ScanAudit(
      *call.services().log, query,
      [&](const replay::AuditRecord& record, const events::Envelope& event) {
        if (record.offset < *from_offset) return true;
        if (record.offset > *to_offset) return false;
        if (records.size() == limit) {
          truncated = true;
          return false;
        }
        records.push_back(replay::AuditRecordJson(record, event, Audience::kOwner));
        return true;
      });
  if (!scanned.ok()) return Error(scanned);
  return Ok({{"records", std::move(records)}, {"truncated", truncated}});
}

}  // namespace cairn::api
