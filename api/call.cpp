#include "api/call.h"

#include "api/rest_util.h"
#include "api/router.h"
#include "base/clock.h"
#include "base/encoding.h"
#include "base/ids.h"
#include "base/password.h"
#include "base/task_secrets.h"
#include "net/websocket.h"

namespace cairn::api {

Call::Call(const Services& services, const net::Request& request, Params params)
    : services_(services),
      request_(request),
      params_(std::move(params)),
      correlation_id_(NewUuid()) {}

Status Call::Admit(Access access) {
  CAIRN_RETURN_IF_ERROR(Authenticate(access));
  // A read waits for the offset it asks for; so does an agent following the event stream.
  const bool user_read = (access == Access::kUser || access == Access::kProxyUserOrSshTunnel ||
                          access == Access::kUserOrAgent || access == Access::kUserOrTask) &&
                         request_.method == "GET";
  // A caller without a credential waits for nothing (Call::ssh_tunnel).
  if ((user_read && !ssh_tunnel_) || (access == Access::kUserOrAgent && agent_caller_)) {
    return WaitForRequestedOffset();
  }
  return Status::Ok();
}

Status Call::Authenticate(Access access) {
  if (access == Access::kPublic) return Status::Ok();
  // The proxy's requests come from a browser too: without a bearer token, its cookie (set for
  // that one task's path) names the user.
  const std::string authorization = request_.Header("authorization");
  // Determined's package sends its task's token in grpc-gateway's metadata header.
  const std::string task_header = request_.Header("grpc-metadata-x-allocation-token");
  if ((access == Access::kTask || access == Access::kUserOrTask) && !task_header.empty()) {
    CAIRN_ASSIGN_OR_RETURN(token_, BearerToken(task_header));
  } else if (access == Access::kProxyUserOrSshTunnel && authorization.rfind("Bearer ", 0) != 0) {
    token_ = CookieValue(request_.Header("cookie"), kProxyCookieName);
  } else {
    CAIRN_ASSIGN_OR_RETURN(token_, BearerToken(authorization));
  }
  if (token_.empty() && access == Access::kProxyUserOrSshTunnel && authorization.empty() &&
      net::AcceptWebSocketUpgrade(request_).ok()) {
    ssh_tunnel_ = true;
    return Status::Ok();
  }
  if (token_.empty()) {
    return Status::Unauthenticated(access == Access::kAgent || access == Access::kAllocation ||
                                           access == Access::kTask
                                       ? "this route needs the agent's or the task's token"
                                       : "Please use 'det user login' to log in first");
  }
  if (access == Access::kTask || access == Access::kUserOrTask) {
    if (auto allocation = AllocationOfTaskSession(services_.agent_token, token_)) {
      task_allocation_ = std::move(*allocation);
      return Status::Ok();
    }
    if (access == Access::kTask) return Status::Unauthenticated("not a task's session token");
  }
  // An agent's own credential names it; the shared agent token names no one in particular.
  if (auto agent_id = AgentOfCredential(services_.agent_token, token_)) {
    calling_agent_ = std::move(*agent_id);
  }
  const bool agent = !calling_agent_.empty() || (!services_.agent_token.empty() &&
                                                 SecretsEqual(token_, services_.agent_token));
  switch (access) {
    case Access::kPublic:
      return Status::Ok();
    case Access::kAgent:
      if (!agent) return Status::Unauthenticated("not the agent token");
      agent_caller_ = true;
      return Status::Ok();
    case Access::kAllocation:
      // Only the token derived for this allocation (base/password.h AllocationToken).
      if (services_.agent_token.empty() ||
          !SecretsEqual(token_, AllocationToken(services_.agent_token, Param("id")))) {
        return Status::Unauthenticated("not this allocation's token");
      }
      return Status::Ok();
    case Access::kUserOrAgent:
      agent_caller_ = agent;
      if (agent) return Status::Ok();
      break;
    case Access::kUser:
    case Access::kProxyUserOrSshTunnel:
    case Access::kTask:
    case Access::kUserOrTask:
      break;
  }
  // A live session's token names the user.
  CAIRN_ASSIGN_OR_RETURN(
      auto record, services_.writer->Authenticate(SessionTokenSha256(token_), NowUnixMicros()));
  user_ = UserFrom(record);
  record.password_hash.clear();
  user_record_ = std::move(record);
  return Status::Ok();
}

void Call::RecordAccessDenied(const net::Response& refusal) {
  auto body = nlohmann::json::parse(refusal.body, nullptr, /*allow_exceptions=*/false);
  std::string reason = body.is_object() && body.contains("message") && body["message"].is_string()
                           ? body["message"].get<std::string>()
                           : "permission denied";
  // Best effort: the refusal stands whether or not its record could be written.
  (void)Execute(commands::RecordAccessDenied{request_.method, request_.path, std::move(reason)});
}

Status Call::RequireAdmin(const std::string& what) const {
  if (user_.admin) return Status::Ok();
  return Status::PermissionDenied("only an admin may " + what + " (you are " + user_.username +
                                  ")");
}

Status Call::RequireAgent(const std::string& agent_id) const {
  if (calling_agent_.empty() || calling_agent_ == agent_id) return Status::Ok();
  return Status::PermissionDenied("this credential is agent " + calling_agent_ + "'s, not agent " +
                                  agent_id + "'s");
}

Audience Call::AudienceFor(const std::string& owner) const {
  return AudienceOf(agent_caller_, user_.admin, user_.username, owner);
}

const commands::TenancyState& Call::tenancy() const {
  if (tenancy_ == nullptr) tenancy_ = services_.writer->Tenancy();
  return *tenancy_;
}

bool Call::CanView(int32_t workspace_id) const {
  return tenancy().Allows(user_record_, commands::Permission::kViewWorkspace,
                          WorkspaceOrUncategorized(workspace_id));
}

bool Call::CanViewModels(int32_t workspace_id) const {
  return tenancy().Allows(user_record_, commands::Permission::kViewModelRegistry,
                          WorkspaceOrUncategorized(workspace_id));
}

Status Call::Require(commands::Permission permission, int32_t workspace_id,
                     const std::string& what) const {
  return commands::Authorize(tenancy(), user_record_, permission, workspace_id, what);
}

int Call::UserIdOf(const std::string& username) const {
  if (username == user_.username) return user_.id;
  auto user = services_.writer->FindUser(username);
  return user ? user->id : 0;
}

const std::string& Call::Param(std::string_view name) const {
  static const std::string kNone;
  auto it = params_.find(name);
  return it == params_.end() ? kNone : it->second;
}

commands::CommandMeta Call::Meta(const std::string& actor) const {
  commands::CommandMeta meta{actor, correlation_id_, request_.Header("idempotency-key"),
                             NowUnixMicros()};
  if (!meta.idempotency_key.empty()) {
    // What the key stands for: this exact request. A retry sends the same bytes. Keyed by the
    // cluster secret: the body may hold a credential, and a plain hash of it in the log would
    // let a reader test guesses.
    meta.request_fingerprint =
        DeriveTaskToken(services_.agent_token, kRequestFingerprintPurpose,
                        request_.method + " " + request_.path + "\n" + request_.body);
  }
  return meta;
}

Result<commands::Outcome> Call::Execute(commands::Command command) {
  return ExecuteAs(std::move(command), UserActor());
}

Result<commands::Outcome> Call::ExecuteAs(commands::Command command, const std::string& actor) {
  return services_.writer->Execute(std::move(command), Meta(actor));
}

Result<commands::Decision> Call::Preview(const commands::Command& command) const {
  return services_.writer->Preview(command, Meta(UserActor()));
}

Result<commands::Outcome> Call::ExecuteAndShow(commands::Command command) {
  CAIRN_ASSIGN_OR_RETURN(commands::Outcome outcome, Execute(std::move(command)));
  CAIRN_RETURN_IF_ERROR(WaitFor(outcome.offset));
  return outcome;
}

Status Call::WaitFor(uint64_t offset) {
  return services_.projections->WaitForOffset(offset, kProjectionWait);
}

Status Call::CatchUp() {
  CAIRN_ASSIGN_OR_RETURN(uint64_t end, services_.log->EndOffset());
  return end == 0 ? Status::Ok() : WaitFor(end - 1);
}

Result<nlohmann::json> Call::Body(bool allow_empty) const {
  return ParseBody(request_, allow_empty);
}

Status Call::WaitForRequestedOffset() {
  std::string text = request_.QueryParam("minOffset");
  if (text.empty()) text = request_.Header("cairn-min-offset");
  if (text.empty()) return Status::Ok();
  if (text.size() > 19 || text.find_first_not_of("0123456789") != std::string::npos) {
    return Status::InvalidArgument("minOffset must be a non-negative integer");
  }
  return WaitFor(std::stoull(text));
}

}  // namespace cairn::api
