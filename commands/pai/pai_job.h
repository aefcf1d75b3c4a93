// OpenPAI's job protocol (shared/seeds/003_*): the job JSON validated field by field, the Cairn
// tasks an attempt runs, and the PAI_* variables each task sees. Pure: no I/O, no clock.
#pragma once

#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "base/status.h"
#include "events.pb.h"

namespace cairn::commands::pai {

// What the edge knows besides the body: who submits, the default file system, and the pools a
// virtual cluster may name.
struct JobContext {
  std::string username;
  std::string default_fs_uri;  // PAI_DEFAULT_FS_URI (master.yaml openpai.default_fs_uri)
};

// Limits beyond the seed's table, so that one job cannot flood the queue or the environment.
inline constexpr int32_t kMaxTasksPerJob = 1000;
inline constexpr int32_t kMaxNameLength = 64;
inline constexpr int32_t kMaxRetryCount = 100;
// Ports with beginAt 0 are the lowest free ones of this range on the task's agent.
inline constexpr int32_t kAnyPortBegin = 20000;
inline constexpr int32_t kAnyPortEnd = 30000;  // exclusive

// The job JSON (OpenPAI's REST body) checked against every row of the seed's table; an error
// names the field ("taskRoles[1].memoryMB must be at least 100"). virtual_cluster is left as
// asked ("default" when omitted); the caller maps it to a pool. outputDir defaults to
// $PAI_DEFAULT_FS_URI/Output/$jobName; $PAI_* references in dataDir, outputDir and codeDir are
// expanded with the job's own values.
Result<events::PaiJobSubmitted> ParseJob(const std::string& body, const JobContext& context);

// Expands $NAME and ${NAME} for the names in `values`; other text is left as it is.
std::string ExpandVariables(const std::string& text,
                            const std::map<std::string, std::string>& values);

// The task id of one task of an attempt: "<job id>.<attempt>.<role>.<index>" ('~', which ids may
// not hold, as '-', which role names may not hold, so no two roles collide).
std::string MemberTaskId(const std::string& job_id, int32_t attempt, const std::string& role,
                         int32_t index);

// The TaskSubmitted of every task of an attempt, in role then index order: one gang, the first
// leading with every task's slots. `resources` gives the pool, priority, weight and max_slots.
std::vector<events::Envelope> AttemptSubmissions(const events::PaiJobSubmitted& job,
                                                 int32_t attempt,
                                                 const events::Resources& resources);

// One placed task of an attempt, for the variables that depend on placement.
struct PlacedMember {
  int32_t role = 0;
  int32_t index = 0;
  std::string host_ip;
  std::vector<events::PaiPorts> ports;  // in the role's portList order
};

// The variables known only once the whole gang is placed: PAI_CONTAINER_HOST_IP,
// PAI_CONTAINER_HOST_PORT_LIST, PAI_CONTAINER_HOST_<label>_PORT_LIST and every role's
// PAI_TASK_ROLE_<name>_HOST_LIST (ip:port by task index, the port being the first of the role's
// first label; a role without ports lists bare addresses).
std::vector<std::string> PlacementVariables(const events::PaiJobSubmitted& job,
                                            const std::vector<PlacedMember>& placed, size_t which);

// Chooses a member's ports on an agent where `in_use` are taken: beginAt..beginAt+n-1, or the
// lowest free ones of [kAnyPortBegin, kAnyPortEnd) for beginAt 0. Adds them to `in_use`.
// FailedPrecondition naming the port when a fixed one is taken.
Result<std::vector<events::PaiPorts>> ChoosePorts(const events::PaiTaskRole& role,
                                                  std::set<int32_t>& in_use);

}  // namespace cairn::commands::pai
