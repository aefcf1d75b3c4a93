// Builds event histories for projection and replay tests: envelopes with deterministic ids,
// offsets, times (one second apart) and writer epochs, as a decider would write them.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "events/event_log.h"

namespace cairn::testing {

class History {
 public:
  static constexpr int64_t kStartMicros = 1'700'000'000'000'000;  // 2023-11-14T22:13:20Z

  // `id_prefix` makes event ids differ between histories (the log identity check).
  explicit History(std::string id_prefix = "ev") : id_prefix_(std::move(id_prefix)) {}

  // Writer epoch stamped on the events that follow (Claim also sets it).
  void set_epoch(uint64_t epoch) { epoch_ = epoch; }

  events::Envelope& Claim(uint64_t epoch);
  events::Envelope& Register(const std::string& agent, const std::string& incarnation,
                             const std::string& pool, int slot_count, bool reconnect = false);
  events::Envelope& Disconnect(const std::string& agent, const std::string& incarnation);
  events::Envelope& Enable(const std::string& agent);
  events::Envelope& Disable(const std::string& agent, bool drain);
  events::Envelope& Submit(const std::string& task, const std::string& job, const std::string& pool,
                           int priority, int slots, const std::string& description = "",
                           const std::string& user = "alice");
  events::Envelope& Assign(const std::string& task, const std::string& allocation,
                           const std::string& agent, const std::string& incarnation,
                           const std::vector<int>& slot_ids, const std::string& reason = "fits");
  events::Envelope& Start(const std::string& task, const std::string& allocation,
                          const std::string& agent, int pid);
  // A notebook's, shell's or TensorBoard's service answers at host:port.
  events::Envelope& Ready(const std::string& task, const std::string& allocation,
                          const std::string& agent, const std::string& host, int port);
  // A generic task paused (held) or unpaused.
  events::Envelope& Hold(const std::string& task, bool held);
  events::Envelope& Kill(const std::string& task, const std::string& allocation,
                         const std::string& agent);
  events::Envelope& Exit(const std::string& task, const std::string& allocation,
                         const std::string& agent, std::optional<int> exit_code,
                         std::optional<int> signal, const std::string& reason);
  // An event of a type this build does not know (as parsed from a newer writer's bytes).
  events::Envelope& Unknown();

  // Scheduling events.
  // Pools named with their scheduler type; the first is the default compute and aux pool.
  static events::ResourcePoolsConfigured Pools(
      const std::vector<std::pair<std::string, events::SchedulerType>>& pools);
  events::Envelope& ConfigurePools(const events::ResourcePoolsConfigured& config);
  events::Envelope& ChangeJob(const std::string& job, int priority, double weight,
                              const std::string& pool, int64_t queue_position, int max_slots = 0,
                              const std::string& reason = "changed by a test");
  static events::AllocationPart Part(const std::string& agent, const std::string& incarnation,
                                     const std::vector<int>& slot_ids);
  // A gang: every part together, the first naming agent_id.
  events::Envelope& AssignGang(const std::string& task, const std::string& allocation,
                               const std::vector<events::AllocationPart>& parts,
                               const std::string& reason = "takes whole agents");
  events::Envelope& Preempt(const std::string& task, const std::string& allocation,
                            const std::string& agent, const std::string& incarnation,
                            const std::string& reason, int64_t deadline_unix_micros);
  events::Envelope& Release(const std::string& task, const std::string& allocation,
                            const std::string& reason);
  events::Envelope& PartExit(const std::string& task, const std::string& allocation,
                             const std::string& agent, int exit_code);

  // Configuration templates.
  events::Envelope& SaveTemplate(const std::string& name, const std::string& config_yaml);
  events::Envelope& DeleteTemplate(const std::string& name);

  // The model registry (commands/registry/model_registry.h).
  events::Envelope& CreateModel(int32_t model_id, const std::string& name,
                                const std::string& description, int32_t workspace_id = 1);
  events::Envelope& RegisterVersion(int32_t model_id, int32_t version, int32_t version_id,
                                    const std::string& checkpoint_uuid);
  events::Envelope& UpdateModel(const events::ModelUpdated& updated);
  events::Envelope& UpdateVersion(const events::ModelVersionUpdated& updated);
  events::Envelope& DeleteVersion(int32_t model_id, int32_t version);
  events::Envelope& DeleteModel(int32_t model_id);

  // Identity: users and sessions (commands/identity/identity.h).
  events::Envelope& CreateUser(int32_t user_id, const std::string& username, bool admin = false);
  events::Envelope& RenameUser(int32_t user_id, const std::string& username);
  events::Envelope& SetUserActive(int32_t user_id, bool active);
  events::Envelope& ChangePassword(int32_t user_id, const std::string& password_hash);
  events::Envelope& StartSession(const std::string& token_sha256, int32_t user_id,
                                 int64_t expires_unix_micros);
  events::Envelope& EndSession(const std::string& token_sha256, int32_t user_id,
                               const std::string& reason);
  events::Envelope& FailLogin(const std::string& username);

  // Experiment events, as the experiment decider writes them.
  events::Envelope& CreateExperiment(int64_t experiment, const std::string& job,
                                     const std::string& config_json, bool activate = true,
                                     const std::string& pool = "default", int priority = 42,
                                     int slots_per_trial = 1);
  events::Envelope& CreateTrial(int64_t experiment, int64_t trial, int request_id,
                                const std::string& hparams_json, double progress = 0,
                                const std::string& reason = "create trial");
  events::Envelope& TrainTo(int64_t experiment, int64_t trial, int64_t length_batches,
                            double progress = 0, const std::string& reason = "train");
  events::Envelope& CloseTrial(int64_t experiment, int64_t trial, double progress = 0,
                               const std::string& reason = "close");
  events::Envelope& RestartTrial(int64_t experiment, int64_t trial, int restarts,
                                 const std::string& reason = "restart");
  events::Envelope& EndTrial(int64_t experiment, int64_t trial, events::ExperimentState state,
                             double progress = 0, const std::string& reason = "ended");
  events::Envelope& ChangeExperimentState(int64_t experiment, events::ExperimentState state,
                                          double progress = 0,
                                          const std::string& reason = "changed");
  events::Envelope& ReportWorkload(int64_t experiment, int64_t trial, const std::string& allocation,
                                   int sequence, events::WorkloadKind completed, int64_t batches,
                                   int64_t total_batches, const std::string& metrics_json = "");
  events::Envelope& SaveCheckpoint(int64_t experiment, int64_t trial, const std::string& uuid,
                                   int64_t total_batches, int64_t size_bytes,
                                   const std::vector<std::pair<std::string, int64_t>>& files,
                                   const std::string& allocation = "");
  events::Envelope& DeleteCheckpoints(int64_t experiment, const std::vector<std::string>& uuids,
                                      const std::string& reason = "gc");
  // A trial's run: a TRIAL task of the experiment's job naming the trial.
  events::Envelope& SubmitRun(const std::string& task, const std::string& job, int64_t trial,
                              const std::string& pool = "default", int slots = 1);

  // A busy cluster: two pools (fair share "default", priority "gpu"), `agents` agents, `tasks`
  // tasks through their lifecycles, a few kills, preemptions with releases and backfilled
  // re-assignments, gangs with a part ending early, job queue changes, jobs with a second task
  // (trials), an agent restart, a new master epoch with a fenced straggler, and unknown events;
  // and every tenth task an experiment: paused and activated, two trials with runs placed,
  // started, released and restarted, training, validation and checkpoint reports, checkpoint
  // deletion, a queue change of its job, and an end in one of several states, with a model whose
  // versions register its checkpoint, changed, archived, renamed or deleted (AddRegistry);
  // templates saved, changed and deleted; users and sessions; workspaces, projects, roles,
  // bindings and moved experiments (AddTenancy); webhooks and their deliveries (AddWebhooks);
  // ended tasks' logs expired; and a last master start (a claim) once every task is through.
  void AddWorkload(int agents, int tasks);

  const std::vector<events::Envelope>& events() const { return events_; }
  uint64_t last_offset() const { return events_.size() - 1; }
  int64_t time_of(uint64_t offset) const { return events_.at(offset).time_unix_micros(); }

  // Appends every event (in batches) to `log`, which must be empty.
  Status AppendTo(EventLog& log) const;

 private:
  events::Envelope& Stamp(events::Envelope event);

  // The experiment part of AddWorkload, for the experiment with this id.
  void AddExperiment(int64_t experiment, int t, const std::string& pool, const std::string& agent,
                     const std::string& incarnation, int& pid);
  // The registry part of AddWorkload for the experiment with this id (at task `t`).
  void AddRegistry(int64_t experiment, int t);
  // An OpenPAI job of AddWorkload at task `t`: two workers placed as a gang with ports; the
  // first attempt fails (one worker exits 3, the other is killed) and is retried; the second
  // succeeds, or is stopped by its user when `t` is even.
  void AddPaiJob(int t, const std::string& pool, const std::string& agent,
                 const std::string& incarnation, int& pid);
  // The tenancy part of AddWorkload at task `t`: workspaces created, renamed, archived, pinned
  // and deleted, projects, roles given and taken, pool bindings, experiments moved.
  void AddTenancy(int t);
  // The webhooks part of AddWorkload at task `t`: webhooks created, their URL changed, deliveries
  // recorded (delivered and given up), webhooks deleted.
  void AddWebhooks(int t);

  std::string id_prefix_;
  uint64_t epoch_ = 0;
  int64_t last_experiment_id_ = 0;  // AddWorkload's experiments, unique across calls
  std::vector<events::Envelope> events_;
};

}  // namespace cairn::testing
