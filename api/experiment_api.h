// The REST endpoints of experiments, trials, checkpoints and configuration templates in
// Determined's shapes (shared/reference/determined-rest.md), and the trial harness's protocol
// (agent/harness/PROTOCOL.md). Reads of experiments come from the experiments projection; the
// templates, and what a trial process asks for, from the write side's own state (a trial's
// next workload is decided there). Writes are commands for the single writer.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "api/rest_api.h"
#include "commands/commands.h"
#include "net/http_types.h"

namespace cairn {

// The harness's routes (/api/v1/allocations/{id}/{trial,context,workloads}): no user token, the
// allocation id is the capability. nullopt when `parts` is not one of them.
std::optional<http::Response> HandleHarnessRequest(const RestApiDeps& deps,
                                                   const http::Request& request,
                                                   const std::vector<std::string>& parts);

// /api/v1/experiments..., /api/v1/trials..., /api/v1/templates... for an authenticated user;
// `meta` is the request's command metadata. nullopt when `parts` is not one of them.
std::optional<http::Response> HandleExperimentRequest(const RestApiDeps& deps,
                                                      const http::Request& request,
                                                      const std::vector<std::string>& parts,
                                                      const std::string& username,
                                                      const commands::CommandMeta& meta);

}  // namespace cairn
