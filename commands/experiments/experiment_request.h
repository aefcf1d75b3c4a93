// What an experiment's request makes on the write side: the configuration a CreateExperiment's
// request configures (its template merged as the log holds it, defaults, checkpoint storage, seed,
// project) and the one a ContinueExperiment's override gives. Pure.
#pragma once

#include <string>

#include "base/status.h"
#include "commands/decision.h"
#include "commands/decision_state.h"
#include "commands/experiments/experiment_commands.h"
#include "commands/experiments/experiment_config.h"

namespace cairn::commands {

// `command.created` with the configuration, seed, template name, project and resources its
// `request` gives (which must be set). InvalidArgument names the configuration's field at fault;
// NotFound for a template or workspace/project the user may not see or that does not exist.
Result<events::ExperimentCreated> ConfigureExperiment(const DecisionState& state,
                                                      const CreateExperiment& command,
                                                      const CommandMeta& meta);

// `experiment`'s configuration with `override_yaml` merged over it, as a template goes under a
// submitted configuration. FailedPrecondition when the stored configuration no longer parses.
Result<experiments::ExperimentConfig> ContinuedConfig(const ExperimentRecord& experiment,
                                                      const std::string& override_yaml);

}  // namespace cairn::commands
