// The templates room's decisions (commands/templates/template_commands.h): saving and deleting a
// configuration template, and who may (MayRun: the right to change templates in its workspace).
// Also what the rooms whose work takes a template ask of it: a configuration merged under the
// template as the decision state holds it, so the template a piece of work was decided with is
// the one in the log at that moment. Pure.
#pragma once

#include <string>

#include "base/status.h"
#include "commands/decision.h"
#include "commands/decision_state.h"
#include "commands/templates/template_commands.h"

namespace cairn::commands {

Result<Decision> DecideCommand(const DecisionState& state, const SaveTemplate& command,
                               const CommandMeta& meta);
Result<Decision> DecideCommand(const DecisionState& state, const DeleteTemplate& command,
                               const CommandMeta& meta);

Status MayRun(const DecisionState& state, const UserRecord& user, const SaveTemplate& command);
Status MayRun(const DecisionState& state, const UserRecord& user, const DeleteTemplate& command);

// `config_yaml` (YAML or JSON text) merged under the template `name`
// (commands/templates/template_merge.h), as YAML text. NotFound when there is no such template or
// the command's user may not see its workspace; InvalidArgument when the merge fails.
Result<std::string> ConfigWithTemplate(const DecisionState& state, const std::string& name,
                                       const std::string& config_yaml, const CommandMeta& meta);

}  // namespace cairn::commands
