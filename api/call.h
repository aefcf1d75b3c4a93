// One REST call as its handler sees it: the request, the route's path parameters, who is calling,
// and the services, with the few things every handler does (run a command as the caller, wait
// for the projections to show it, read the body).
#pragma once

#include <chrono>
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>

#include "api/auth.h"
#include "api/responses.h"
#include "api/services.h"
#include "commands/commands.h"
#include "commands/writer.h"
#include "events/redaction.h"
#include "net/http_types.h"

namespace cairn::api {

enum class Access;

class Call {
 public:
  using Params = std::map<std::string, std::string, std::less<>>;
  Call(const Services& services, const net::Request& request, Params params);

  // Lets the caller in for a route with `access`, or says why not; reads the user's token. A read
  // then waits for the offset it asks for (?minOffset=).
  Status Admit(Access access);
  // Admit's check of the credential alone, from the request's head: what the server asks before
  // it reads a body (Router::AdmitBody).
  Status Authenticate(Access access);

  const Services& services() const { return services_; }
  const net::Request& request() const { return request_; }
  // A path parameter of the route ("{id}" -> Param("id")); "" when the route has none so named.
  const std::string& Param(std::string_view name) const;
  const User& user() const { return user_; }
  // Whether the caller is an agent (the agent token or an agent's credential), not a person.
  bool agent_caller() const { return agent_caller_; }
  // Whether the caller presented no credential and asks for a WebSocket (Access::
  // kProxyUserOrSshTunnel): no one in particular, who may reach a shell's sshd only.
  bool ssh_tunnel() const { return ssh_tunnel_; }
  // The agent whose own credential (base/password.h AgentCredential) the caller presented; "" for
  // the shared agent token, which may speak for any agent.
  const std::string& calling_agent() const { return calling_agent_; }
  // The allocation whose task session token the caller presented (Access::kTask, kUserOrTask);
  // "" for a user.
  const std::string& task_allocation() const { return task_allocation_; }
  // PermissionDenied unless the caller may speak for `agent_id`.
  Status RequireAgent(const std::string& agent_id) const;
  // Who the caller is to `owner`'s work, for secrets (events/redaction.h): an agent sees them,
  // the owner and admins see all but those marked secret, anyone else none.
  Audience AudienceFor(const std::string& owner) const;
  // The same user as the write side holds it (without its password hash), for role checks.
  const commands::UserRecord& user_record() const { return user_record_; }
  // Appends AccessDenied for this request, refused with `refusal` (a 403), as the caller.
  void RecordAccessDenied(const net::Response& refusal);
  // PermissionDenied (403) naming what only an admin may do, unless the caller is one.
  Status RequireAdmin(const std::string& what) const;
  // Reads of a workspace's work: whether the caller holds a role there
  // (commands/tenancy/tenancy.h).
  bool CanView(int32_t workspace_id) const;
  // Reads of a workspace's models and their versions (a ModelRegistryViewer reads only these).
  bool CanViewModels(int32_t workspace_id) const;
  // PermissionDenied naming `permission` unless the caller holds it in `workspace_id`.
  Status Require(commands::Permission permission, int32_t workspace_id,
                 const std::string& what) const;
  // The tenancy snapshot this call reads (the same one for the whole call).
  const commands::TenancyState& tenancy() const;
  // The caller's session token ("" for an anonymous call), to end it at logout.
  const std::string& token() const { return token_; }
  // The id of the user named `username` now, 0 when there is none (renderers show it).
  int UserIdOf(const std::string& username) const;
  // "allocation:<id>": the actor of what a task's own token asks (Access::kTask, kUserOrTask).
  std::string AllocationActor() const { return "allocation:" + task_allocation_; }
  // "user:<name>": the actor every event of the user's commands records.
  std::string UserActor() const { return "user:" + user_.username; }

  // The command's metadata for `actor`: this request's id and Idempotency-Key, the time now.
  commands::CommandMeta Meta(const std::string& actor) const;
  // Runs `command` for the calling user.
  Result<commands::Outcome> Execute(commands::Command command);
  Result<commands::Outcome> ExecuteAs(commands::Command command, const std::string& actor);
  // The decision `command` would get for the calling user now; nothing is written.
  Result<commands::Decision> Preview(const commands::Command& command) const;
  // Runs `command` for the calling user and waits until the projections show it, so the answer
  // (and the caller's next read) sees the write.
  Result<commands::Outcome> ExecuteAndShow(commands::Command command);
  // Waits until the projections applied `offset`, so the answer shows the caller's write.
  Status WaitFor(uint64_t offset);
  // Waits until the projections applied every event the log holds now.
  Status CatchUp();

  // The JSON object body; malformed JSON and a non-object are the caller's error.
  Result<nlohmann::json> Body(bool allow_empty = false) const;
  Result<Paging> ReadPaging() const { return api::ReadPaging(request_); }

 private:
  // Honours ?minOffset= / the Cairn-Min-Offset header on reads.
  Status WaitForRequestedOffset();

  const Services& services_;
  const net::Request& request_;
  Params params_;
  User user_;
  commands::UserRecord user_record_;  // without its password hash
  mutable std::shared_ptr<const commands::TenancyState> tenancy_;
  std::string token_;
  std::string correlation_id_;
  bool agent_caller_ = false;
  bool ssh_tunnel_ = false;
  std::string calling_agent_;
  std::string task_allocation_;
};

// How long a call waits for the projections to show a write before it answers.
inline constexpr std::chrono::seconds kProjectionWait{10};

}  // namespace cairn::api
