#include "api/handlers/harness.h"

#include "api/rest_util.h"
#include "events/sealing.h"

namespace cairn::api {

using nlohmann::json;

namespace {

// "TRAIN", "VALIDATE", "CHECKPOINT", "EXIT": the protocol's names are the enum's, unprefixed.
std::string WorkloadKindText(events::WorkloadKind kind) {
  const std::string name = events::WorkloadKind_Name(kind);
  const std::string prefix = "WORKLOAD_KIND_";
  return name.rfind(prefix, 0) == 0 ? name.substr(prefix.size()) : name;
}

Result<events::WorkloadKind> ParseWorkloadKind(const std::string& text) {
  if (text == "TRAIN") return events::WORKLOAD_KIND_TRAIN;
  if (text == "VALIDATE") return events::WORKLOAD_KIND_VALIDATE;
  if (text == "CHECKPOINT") return events::WORKLOAD_KIND_CHECKPOINT;
  return Status::InvalidArgument("completed.kind must be TRAIN, VALIDATE or CHECKPOINT");
}

json WorkloadAnswer(const events::TrialWorkloadAssigned& assigned) {
  json workload = {{"kind", WorkloadKindText(assigned.kind())}};
  if (assigned.kind() == events::WORKLOAD_KIND_TRAIN) {
    workload["batches"] = assigned.batches();
    workload["startBatch"] = assigned.start_batch();
  }
  if (assigned.kind() == events::WORKLOAD_KIND_EXIT) workload["reason"] = assigned.reason();
  return {{"workload", workload}};
}

Result<commands::ReportWorkload> ParseReport(const std::string& allocation_id, const json& body) {
  commands::ReportWorkload report;
  report.allocation_id = allocation_id;
  CAIRN_RETURN_IF_ERROR(CheckKnownKeys(body, "", {"sequence", "completed"}));
  CAIRN_ASSIGN_OR_RETURN(auto sequence, GetInt32(body, "sequence", "sequence"));
  if (!sequence) return Status::InvalidArgument("sequence is required");
  report.sequence = *sequence;
  if (!Present(body, "completed")) return report;
  const json& completed = body.at("completed");
  if (!completed.is_object()) return Status::InvalidArgument("completed must be an object");
  CAIRN_ASSIGN_OR_RETURN(std::string kind, GetString(completed, "kind", "completed.kind", true));
  CAIRN_ASSIGN_OR_RETURN(report.completed, ParseWorkloadKind(kind));
  if (Present(completed, "metrics")) report.metrics_json = completed.at("metrics").dump();
  switch (report.completed) {
    case events::WORKLOAD_KIND_TRAIN: {
      CAIRN_ASSIGN_OR_RETURN(auto batches, GetInt(completed, "batches", "completed.batches"));
      report.batches = batches.value_or(0);
      break;
    }
    case events::WORKLOAD_KIND_CHECKPOINT: {
      auto& checkpoint = report.checkpoint;
      CAIRN_ASSIGN_OR_RETURN(std::string uuid,
                             GetString(completed, "uuid", "completed.uuid", true));
      checkpoint.set_uuid(uuid);
      CAIRN_ASSIGN_OR_RETURN(auto batches, GetInt(completed, "batches", "completed.batches"));
      checkpoint.set_total_batches(batches.value_or(0));
      CAIRN_ASSIGN_OR_RETURN(auto size, GetInt(completed, "sizeBytes", "completed.sizeBytes"));
      checkpoint.set_size_bytes(size.value_or(0));
      if (Present(completed, "resources")) {
        if (!completed.at("resources").is_object()) {
          return Status::InvalidArgument("completed.resources must map paths to sizes");
        }
        for (const auto& [path, bytes] : completed.at("resources").items()) {
          if (!bytes.is_number_integer()) {
            return Status::InvalidArgument("completed.resources." + path + " must be an integer");
          }
          (*checkpoint.mutable_resources())[path] = bytes.get<int64_t>();
        }
      }
      if (Present(completed, "metadata")) {
        checkpoint.set_metadata_json(completed.at("metadata").dump());
      }
      break;
    }
    default:
      break;
  }
  return report;
}

}  // namespace

net::Response TrialDescription(Call& call) {
  auto start = call.services().writer->DescribeTrialRun(call.Param("id"));
  if (!start.ok()) return Error(start.status());
  json hparams = json::parse(start->hparams_json, nullptr, /*allow_exceptions=*/false);
  const experiments::EnvironmentConfig& environment = start->environment;
  json latest = nullptr;
  if (!start->latest_checkpoint.empty()) {
    latest = {{"uuid", start->latest_checkpoint}, {"batches", start->checkpoint_batches}};
  }
  // Only the trial's own allocation reads this route: its credentials open here, for it (the
  // storage's keys, the variables marked secret), and nothing else that looks sealed.
  json determined = start->determined_config;
  json variables = {{"environment",
                     {{"environment_variables",
                       experiments::PerDeviceJson({environment.environment_variables_cpu,
                                                   environment.environment_variables_cuda,
                                                   environment.environment_variables_rocm})},
                      {"secret_environment_variables", environment.secret_environment_variables}}}};
  for (json* config : {&determined, &variables}) {
    if (Status opened = UnsealConfig(*config, call.services().sealer); !opened.ok()) {
      return Error(opened);
    }
  }
  const json& per_device = variables["environment"]["environment_variables"];
  return Ok({{"trialId", start->trial_id},
             {"experimentId", start->experiment_id},
             {"requestId", start->request_id},
             {"hparams", hparams.is_discarded() ? json::object() : hparams},
             {"entrypoint", start->entrypoint},
             {"checkpointDir", start->checkpoint_dir},
             // The storage itself, credentials included: an object store's trials write
             // through it.
             {"checkpointStorage", determined.value("checkpoint_storage", json())},
             {"latestCheckpoint", latest},
             {"batchesCompleted", start->checkpoint_batches},
             {"recordsPerEpoch", start->records_per_epoch},
             {"globalBatchSize", start->global_batch_size},
             // Before trial environments had variants per slot type (PROTOCOL.md section 1).
             {"environmentVariables", per_device["cpu"]},
             // For a run of Determined's own package (cairn_harness/determined_mode.py).
             {"determined",
              {{"entrypointArgv", start->entrypoint_argv},
               {"taskId", start->task_id},
               {"trialRunId", start->run},
               {"trialSeed", start->trial_seed},
               {"config", determined},
               {"rendezvous",
                {{"addresses", start->container_addresses}, {"slots", start->container_slots}}}}},
             {"environment",
              {{"image", environment.image},
               {"environmentVariables", per_device},
               {"runtimeCommands", experiments::PerDeviceJson(environment.runtime_commands)},
               {"runtimePackages", experiments::PerDeviceJson(environment.runtime_packages)}}}});
}

net::Response TrialContext(Call& call) {
  auto start = call.services().writer->DescribeTrialRun(call.Param("id"));
  if (!start.ok()) return Error(start.status());
  auto files = call.services().contexts->GetHarnessJson(start->context_digest);
  if (!files.ok()) return Error(files.status());
  net::Response response;
  response.body = std::move(*files);
  return response;
}

net::Response ReportWorkload(Call& call) {
  const std::string& allocation_id = call.Param("id");
  auto body = call.Body();
  if (!body.ok()) return Error(body.status());
  auto report = ParseReport(allocation_id, *body);
  if (!report.ok()) return Error(report.status());
  const int32_t sequence = report->sequence;
  auto outcome = call.ExecuteAs(std::move(*report), "allocation:" + allocation_id);
  if (!outcome.ok()) return Error(outcome.status());
  // The answer was decided in the same write, by the experiment reactor.
  if (!outcome->workload_answer) {
    return Error(
        Status::Unavailable("workload " + std::to_string(sequence) + " has no answer yet; retry"));
  }
  return Ok(WorkloadAnswer(*outcome->workload_answer), outcome->offset);
}

}  // namespace cairn::api
