#include "commands/identity/identity_decider.h"

#include <string>
#include <utility>
#include <vector>

#include "events/envelope_util.h"

namespace cairn::commands {
namespace {

// An identity decision as a Decision: its entity is the user it is about.
Result<Decision> AsDecision(Result<std::vector<events::Envelope>> events,
                            std::string entity_id = "") {
  if (!events.ok()) return events.status();
  if (entity_id.empty() && !events->empty()) entity_id = EntityIdOf(events->front());
  return Decision{std::move(*events), std::move(entity_id)};
}

std::string UserEntity(int32_t user_id) { return "user/" + std::to_string(user_id); }

}  // namespace

Result<Decision> DecideCommand(const DecisionState& state, const CreateUser& command,
                               const CommandMeta&) {
  return AsDecision(DecideCreateUser(state.identity, command));
}

Result<Decision> DecideCommand(const DecisionState& state, const UpdateUser& command,
                               const CommandMeta&) {
  return AsDecision(DecideUpdateUser(state.identity, command), UserEntity(command.user_id));
}

Result<Decision> DecideCommand(const DecisionState& state, const StartSession& command,
                               const CommandMeta& meta) {
  return AsDecision(DecideStartSession(state.identity, command, meta.time_unix_micros),
                    UserEntity(command.user_id));
}

Result<Decision> DecideCommand(const DecisionState& state, const EndSession& command,
                               const CommandMeta&) {
  return AsDecision(DecideEndSession(state.identity, command));
}

Result<Decision> DecideCommand(const DecisionState& state, const CreateAccessToken& command,
                               const CommandMeta& meta) {
  // Its entity names the token, whose id the edge hands back to the caller.
  auto events = DecideCreateAccessToken(state.identity, command, meta.time_unix_micros);
  if (!events.ok()) return events.status();
  const std::string entity =
      "token/" + std::to_string(events->front().access_token_created().token_id());
  return AsDecision(std::move(events), entity);
}

Result<Decision> DecideCommand(const DecisionState& state, const UpdateAccessToken& command,
                               const CommandMeta& meta) {
  return AsDecision(DecideUpdateAccessToken(state.identity, command, meta.time_unix_micros));
}

Result<Decision> DecideCommand(const DecisionState&, const RecordLoginFailure& command,
                               const CommandMeta&) {
  return AsDecision(DecideRecordLoginFailure(command));
}

Result<Decision> DecideCommand(const DecisionState&, const RecordAccessDenied& command,
                               const CommandMeta&) {
  return AsDecision(DecideRecordAccessDenied(command));
}

Status MayRun(const DecisionState&, const UserRecord&, const CreateUser&) { return Status::Ok(); }
Status MayRun(const DecisionState&, const UserRecord&, const UpdateUser&) { return Status::Ok(); }
Status MayRun(const DecisionState&, const UserRecord&, const StartSession&) { return Status::Ok(); }
Status MayRun(const DecisionState&, const UserRecord&, const EndSession&) { return Status::Ok(); }
Status MayRun(const DecisionState&, const UserRecord&, const CreateAccessToken&) {
  return Status::Ok();
}
Status MayRun(const DecisionState&, const UserRecord&, const UpdateAccessToken&) {
  return Status::Ok();
}
Status MayRun(const DecisionState&, const UserRecord&, const RecordLoginFailure&) {
  return Status::Ok();
}
Status MayRun(const DecisionState&, const UserRecord&, const RecordAccessDenied&) {
  return Status::Ok();
}

}  // namespace cairn::commands
