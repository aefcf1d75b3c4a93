// Configuration templates: the merge of a stored template under a user's experiment configuration,
// with Determined's rules (below). The result is the effective configuration's text, which the
// caller parses (an experiment's: commands/experiments/experiment_config.h; a command's:
// commands/tasks/command_config.h) and stores with the work, so later edits of the template do not
// change it. Pure functions.
#pragma once

#include <nlohmann/json.hpp>
#include <optional>
#include <string>

#include "base/status.h"

namespace cairn::templates {

// Checks that `template_yaml` can be a template: a map (or empty) without a `template` key of its
// own (a template cannot use another template). The API calls it when a template is saved.
Status CheckTemplate(const std::string& template_yaml);

// The name in the configuration's top-level `template` key, or nullopt when there is none.
Result<std::optional<std::string>> TemplateNameOf(const std::string& config_yaml);

// `config` merged over `template_config`; the user's configuration wins:
// - scalars: the user's value unless it is absent or null;
// - maps (data, resources, nested hyperparameters, ...): keys of both, merged recursively;
// - lists: the user's list replaces the template's (even an empty one), except
//   environment.environment_variables: the template's entries, then the user's (per cpu/cuda/rocm
//   when either side is a map; a plain list applies to all three); bind_mounts: the user's, then
//   the template's on another container_path; log_policies: the user's, then the template's of
//   another name (unnamed ones: of another action and pattern);
// - union types never mix members: checkpoint_storage (by `type`) and searcher (by `name`). When
//   the user names a different member than the template, only the common fields (save_* for
//   storage; metric, smaller_is_better, source_* for searchers) come from the template; otherwise
//   the two are merged as maps;
// - a hyperparameter is atomic (the user's replaces the template's whole, count included) unless
//   both sides are nested maps, which merge recursively.
// The user's `template` key is dropped; a `template` key in the template is an error.
Result<nlohmann::ordered_json> MergeTemplate(const nlohmann::ordered_json& template_config,
                                             const nlohmann::ordered_json& config);

// The same over YAML (or JSON) texts, returning the merged configuration as YAML text for
// ParseExperimentConfig. Errors name the document ("template: line 3: ...").
Result<std::string> ApplyTemplate(const std::string& template_yaml, const std::string& config_yaml);

}  // namespace cairn::templates
