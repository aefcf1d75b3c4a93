// History::AddWorkload: the busy cluster the digest, rebuild and replay tests fold.
#include "tests/projections/history.h"

namespace cairn::testing {

void History::AddExperiment(int64_t experiment, int t, const std::string& pool,
                            const std::string& agent, const std::string& incarnation, int& pid) {
  using events::WORKLOAD_KIND_TRAIN;
  using events::WORKLOAD_KIND_UNSPECIFIED;
  using events::WORKLOAD_KIND_VALIDATE;
  const std::string job = "exp-job-" + std::to_string(experiment);
  const int64_t first = experiment * 10 + 1;
  const int64_t second = experiment * 10 + 2;
  // Some experiments rank by accuracy (larger is better), the others by loss.
  const bool by_accuracy = t % 30 == 0;
  CreateExperiment(
      experiment, job,
      std::string(
          R"({"name":"exp","entrypoint":"model:Trial","searcher":{"name":"single","metric":")") +
          (by_accuracy ? "accuracy" : "loss") + R"(","smaller_is_better":)" +
          (by_accuracy ? "false" : "true") +
          R"(,"max_length":{"batches":200}},"resources":{"slots_per_trial":1}})",
      /*activate=*/t % 20 != 10, pool);
  if (t % 20 == 10) ChangeExperimentState(experiment, events::EXPERIMENT_STATE_ACTIVE, 0);
  CreateTrial(experiment, first, 0, R"({"lr":0.1})", 0.0);
  CreateTrial(experiment, second, 1, R"({"lr":0.01})", 0.0);
  TrainTo(experiment, first, 100, 0.1);
  TrainTo(experiment, second, 100, 0.2);

  // The first trial trains, validates and checkpoints, fails once and runs again.
  std::string run = "run-" + std::to_string(first) + "-1";
  std::string allocation = run + ".1";
  SubmitRun(run, job, first, pool);
  Assign(run, allocation, agent, incarnation, {t % 4});
  Start(run, allocation, agent, ++pid);
  ReportWorkload(experiment, first, allocation, 0, WORKLOAD_KIND_UNSPECIFIED, 0, 0);
  ReportWorkload(experiment, first, allocation, 1, WORKLOAD_KIND_TRAIN, 100, 100,
                 R"({"loss":0.5})");
  ReportWorkload(experiment, first, allocation, 2, WORKLOAD_KIND_VALIDATE, 0, 100,
                 R"({"accuracy":0.8,"loss":0.4})");
  const std::string early = "ckpt-" + std::to_string(first) + "-100";
  SaveCheckpoint(experiment, first, early, 100, 4096, {{"state.pt", 4096}}, allocation);
  Exit(run, allocation, agent, 1, std::nullopt, "exited with code 1");
  RestartTrial(experiment, first, 1, "the run failed; restart 1 of 5");
  run = "run-" + std::to_string(first) + "-2";
  allocation = run + ".1";
  SubmitRun(run, job, first, pool);
  if (t % 20 == 0) ChangeJob(job, 5, 1.0, pool, -t, 0, "priority 42 -> 5");
  Assign(run, allocation, agent, incarnation, {t % 4});
  Start(run, allocation, agent, ++pid);
  if (t % 30 == 0) {
    Preempt(run, allocation, agent, incarnation, "make room", time_of(events_.size() - 1) + 1);
    Release(run, allocation, "preempted; back in the queue");
    allocation = run + ".2";
    Assign(run, allocation, agent, incarnation, {t % 4});
    Start(run, allocation, agent, ++pid);
  }
  ReportWorkload(experiment, first, allocation, 0, WORKLOAD_KIND_UNSPECIFIED, 0, 100);
  TrainTo(experiment, first, 200, 0.5);
  ReportWorkload(experiment, first, allocation, 1, WORKLOAD_KIND_TRAIN, 100, 200,
                 R"({"loss":0.3})");
  ReportWorkload(experiment, first, allocation, 2, WORKLOAD_KIND_VALIDATE, 0, 200,
                 R"({"accuracy":0.85,"loss":0.45})");
  SaveCheckpoint(experiment, first, "ckpt-" + std::to_string(first) + "-200", 200, 8192,
                 {{"state.pt", 8192}}, allocation);
  DeleteCheckpoints(experiment, {early}, "save_trial_latest: 1");
  CloseTrial(experiment, first, 0.7);
  Exit(run, allocation, agent, 0, std::nullopt, "exited");
  EndTrial(experiment, first, events::EXPERIMENT_STATE_COMPLETED, 0.75);

  // The second trial's run, and how the experiment ends.
  run = "run-" + std::to_string(second) + "-1";
  allocation = run + ".1";
  SubmitRun(run, job, second, pool);
  switch (t % 40) {
    case 0: {  // paused with the run still queued, and the trial killed by its owner
      ChangeExperimentState(experiment, events::EXPERIMENT_STATE_PAUSED, 0.75, "paused");
      events::Envelope kill;
      kill.mutable_trial_kill_requested()->set_experiment_id(experiment);
      kill.mutable_trial_kill_requested()->set_trial_id(second);
      Stamp(std::move(kill));
      break;
    }
    case 10: {  // canceled; then continued and deleted, or renamed, labelled and archived
      Kill(run, "", "");
      Exit(run, "", "", std::nullopt, std::nullopt, "killed while queued");
      ChangeExperimentState(experiment, events::EXPERIMENT_STATE_STOPPING_CANCELED, 0.75);
      EndTrial(experiment, second, events::EXPERIMENT_STATE_CANCELED, 0.75);
      ChangeExperimentState(experiment, events::EXPERIMENT_STATE_CANCELED, 0.75);
      if (t % 80 == 50) {  // the single-trial kind of continuation, and then a deletion
        events::Envelope continued;
        continued.mutable_experiment_continued()->set_experiment_id(experiment);
        continued.mutable_experiment_continued()->set_trial_id(second);
        continued.mutable_experiment_continued()->set_config_json(
            R"({"searcher":{"name":"single","metric":"loss","max_length":{"batches":200}}})");
        Stamp(std::move(continued));
        ChangeExperimentState(experiment, events::EXPERIMENT_STATE_CANCELED, 0.75);
        events::Envelope deleted;
        deleted.mutable_experiment_deleted()->set_experiment_id(experiment);
        Stamp(std::move(deleted));
        break;
      }
      events::Envelope updated;
      auto* edit = updated.mutable_experiment_updated();
      edit->set_experiment_id(experiment);
      edit->set_job_id(job);
      edit->set_name("renamed-" + std::to_string(experiment));
      edit->set_notes("notes");
      edit->set_labels_set(true);
      edit->add_labels("baseline");
      Stamp(std::move(updated));
      events::Envelope archived;
      archived.mutable_experiment_archived()->set_experiment_id(experiment);
      archived.mutable_experiment_archived()->set_archived(true);
      Stamp(std::move(archived));
      break;
    }
    case 20:
      Assign(run, allocation, agent, incarnation, {(t + 1) % 4});
      Start(run, allocation, agent, ++pid);
      ReportWorkload(experiment, second, allocation, 0, WORKLOAD_KIND_UNSPECIFIED, 0, 0);
      ReportWorkload(experiment, second, allocation, 1, WORKLOAD_KIND_TRAIN, 100, 100,
                     R"({"loss":0.7})");
      CloseTrial(experiment, second, 0.9);
      Exit(run, allocation, agent, 0, std::nullopt, "exited");
      EndTrial(experiment, second, events::EXPERIMENT_STATE_COMPLETED, 1.0);
      ChangeExperimentState(experiment, events::EXPERIMENT_STATE_COMPLETED, 1.0);
      break;
    default:
      Assign(run, allocation, agent, incarnation, {(t + 1) % 4});
      Start(run, allocation, agent, ++pid);
      Exit(run, allocation, agent, 1, std::nullopt, "exited with code 1");
      EndTrial(experiment, second, events::EXPERIMENT_STATE_ERROR, 0.75);
      ChangeExperimentState(experiment, events::EXPERIMENT_STATE_ERROR, 0.75);
      break;
  }
}

void History::AddRegistry(int64_t experiment, int t) {
  const auto model = static_cast<int32_t>(experiment);
  const std::string checkpoint = "ckpt-" + std::to_string(experiment * 10 + 1) + "-200";
  CreateModel(model, "model-" + std::to_string(model), "from experiment " + std::to_string(model));
  RegisterVersion(model, 1, 2 * model - 1, checkpoint);
  RegisterVersion(model, 2, 2 * model, checkpoint);
  events::ModelVersionUpdated version;
  version.set_model_id(model);
  version.set_version(1);
  version.set_notes("the first, t" + std::to_string(t));
  version.mutable_labels()->add_labels("candidate");
  UpdateVersion(version);
  events::ModelUpdated updated;
  updated.set_model_id(model);
  updated.set_workspace_id(1);
  updated.set_description("changed at t" + std::to_string(t));
  updated.mutable_labels()->add_labels("staging");
  updated.set_metadata_json(R"({"t":)" + std::to_string(t) + "}");
  if (t % 20 == 0) updated.set_archived(true);
  if (t % 40 == 10) updated.set_name("renamed-model-" + std::to_string(model));
  UpdateModel(updated);
  if (t % 30 == 0) DeleteVersion(model, 2);
  if (t % 40 == 20) DeleteModel(model);
}

void History::AddTenancy(int t) {
  const int32_t workspace = 2 + t / 6;
  const int32_t project = 2 + t / 3;
  const int32_t user = 10 + t / 7;
  events::Envelope event;
  switch (t % 6) {
    case 0: {
      auto* created = event.mutable_workspace_created();
      created->set_workspace_id(workspace);
      created->set_name("team-" + std::to_string(workspace));
      created->set_owner_user_id(user);
      if (t % 12 == 0) created->set_default_compute_pool("gpu");
      break;
    }
    case 1: {
      auto* assigned = event.mutable_role_assigned();
      assigned->set_user_id(user);
      assigned->set_workspace_id(t % 12 == 1 ? 0 : workspace);
      assigned->set_role(t % 12 == 1 ? events::ROLE_VIEWER : events::ROLE_EDITOR);
      break;
    }
    case 2: {
      auto* created = event.mutable_project_created();
      created->set_project_id(project);
      created->set_workspace_id(workspace);
      created->set_name("project-" + std::to_string(project));
      created->set_owner_user_id(user);
      break;
    }
    case 3: {
      auto* changed = event.mutable_pool_bindings_changed();
      changed->set_pool_name("gpu");
      if (t % 12 == 3) changed->add_workspace_ids(workspace);
      break;
    }
    case 4: {
      auto* updated = event.mutable_workspace_updated();
      updated->set_workspace_id(workspace);
      updated->set_name("renamed-team-" + std::to_string(workspace));
      if (t % 12 == 4) updated->set_archived(true);
      Stamp(event);
      event.Clear();
      auto* pinned = event.mutable_workspace_pinned();
      pinned->set_workspace_id(workspace);
      pinned->set_user_id(user);
      pinned->set_pinned(true);
      break;
    }
    case 5: {
      if (last_experiment_id_ > 0) {
        auto* moved = event.mutable_experiment_moved();
        moved->set_experiment_id(last_experiment_id_);
        moved->set_project_id(project - 1);
        moved->set_workspace_id(workspace);
        moved->set_job_id("experiment-" + std::to_string(last_experiment_id_));
        Stamp(event);
        event.Clear();
      }
      if (t % 12 == 11) {
        event.mutable_role_removed()->set_user_id(user);
        event.mutable_role_removed()->set_workspace_id(workspace);
        event.mutable_role_removed()->set_role(events::ROLE_EDITOR);
      } else {
        event.mutable_workspace_deleted()->set_workspace_id(workspace);
      }
      break;
    }
  }
  Stamp(std::move(event));
}

void History::AddPaiJob(int t, const std::string& pool, const std::string& agent,
                        const std::string& incarnation, int& pid) {
  const std::string id = std::to_string(t);
  const std::string job_id = "pai-" + id;
  events::Envelope submitted_event;
  auto* job = submitted_event.mutable_pai_job_submitted();
  job->set_job_id(job_id);
  job->set_job_name("pai-job-" + id);
  job->set_username("alice");
  job->set_virtual_cluster(pool);
  job->set_resource_pool(pool);
  job->set_retry_count(1);
  job->set_config_json("{\"jobName\": \"pai-job-" + id + "\"}");
  auto* role = job->add_task_roles();
  role->set_name("worker");
  role->set_task_number(2);
  role->set_gpu_number(1);
  auto* port = role->add_port_list();
  port->set_label("http");
  port->set_port_number(1);
  Stamp(std::move(submitted_event));
  for (int attempt = 0; attempt < 2; ++attempt) {
    std::vector<std::string> tasks;
    for (int index = 0; index < 2; ++index) {
      tasks.push_back(job_id + "." + std::to_string(attempt) + ".worker." + std::to_string(index));
    }
    events::Envelope started;
    started.mutable_pai_job_attempt_started()->set_job_id(job_id);
    started.mutable_pai_job_attempt_started()->set_attempt(attempt);
    for (const auto& task : tasks) started.mutable_pai_job_attempt_started()->add_task_ids(task);
    Stamp(std::move(started));
    for (int index = 0; index < 2; ++index) {
      auto* submitted = Submit(tasks[index], job_id, pool, 42, 1).mutable_task_submitted();
      submitted->mutable_resources()->set_gang_size(2);
      submitted->mutable_resources()->set_gang_rank(index);
      auto* ref = submitted->mutable_pai();
      ref->set_job_id(job_id);
      ref->set_attempt(attempt);
      ref->set_task_role("worker");
      ref->set_task_index(index);
    }
    for (int index = 0; index < 2; ++index) {
      auto* assigned = Assign(tasks[index], tasks[index] + ".1", agent, incarnation, {index})
                           .mutable_allocation_assigned();
      assigned->mutable_spec()->add_environment_variables("PAI_CONTAINER_HOST_IP=10.0.0." + id);
      auto* ports = assigned->add_ports();
      ports->set_label("http");
      ports->add_ports(20000 + index);
      Start(tasks[index], tasks[index] + ".1", agent, ++pid);
    }
    events::Envelope ended;
    auto* end = ended.mutable_pai_job_attempt_ended();
    end->set_job_id(job_id);
    end->set_attempt(attempt);
    end->set_trigger_task_role("worker");
    end->set_trigger_task_index(0);
    if (attempt == 0) {
      Exit(tasks[0], tasks[0] + ".1", agent, 3, std::nullopt, "exited with code 3");
      Kill(tasks[1], tasks[1] + ".1", agent);
      Exit(tasks[1], tasks[1] + ".1", agent, std::nullopt, 15, "killed");
      end->set_state("FAILED");
      end->set_retrying(true);
      end->set_exit_code(3);
    } else if (t % 2 == 0) {
      events::Envelope stop;
      stop.mutable_pai_job_stop_requested()->set_job_id(job_id);
      Stamp(std::move(stop));
      for (const auto& task : tasks) {
        Kill(task, task + ".1", agent);
        Exit(task, task + ".1", agent, std::nullopt, 15, "the OpenPAI job was stopped");
      }
      end->set_state("STOPPED");
    } else {
      for (const auto& task : tasks) Exit(task, task + ".1", agent, 0, std::nullopt, "exited");
      end->set_state("SUCCEEDED");
      end->set_exit_code(0);
    }
    Stamp(std::move(ended));
  }
}

void History::AddWorkload(int agents, int tasks) {
  const std::vector<std::string> pools = {"default", "gpu"};
  ConfigurePools(Pools(
      {{"default", events::SCHEDULER_TYPE_FAIR_SHARE}, {"gpu", events::SCHEDULER_TYPE_PRIORITY}}));
  for (int a = 0; a < agents; ++a) {
    Register("agent-" + std::to_string(a), "inc-1", pools[a % 2], 4);
  }
  std::vector<std::string> incarnations(static_cast<size_t>(agents), "inc-1");
  int pid = 1000;
  for (int t = 0; t < tasks; ++t) {
    const std::string id = std::to_string(t);
    const std::string task = "task-" + id;
    const std::string job = "job-" + id;
    std::string allocation = "alloc-" + id;
    const size_t agent_index = static_cast<size_t>(t % agents);
    const std::string agent = "agent-" + std::to_string(agent_index);
    const std::string& pool = pools[agent_index % 2];
    Submit(task, job, pool, t % 3 == 0 ? 10 : 42, 1 + t % 2);
    if (t % 6 == 2) {  // a second trial of the same experiment, left queued
      Submit(task + "-b", job, pool, 42, 1)
          .mutable_task_submitted()
          ->mutable_spec()
          ->set_task_type(events::TASK_TYPE_TRIAL);
    }
    if (t % 10 == 5) {
      ChangeJob(job, 7, 2.0, pool, -static_cast<int64_t>(t), t % 4, "priority 42 -> 7; moved");
    }
    if (t % 10 == 0) {
      AddExperiment(++last_experiment_id_, t, pool, agent, incarnations[agent_index], pid);
      AddRegistry(last_experiment_id_, t);
    }
    AddTenancy(t);
    AddWebhooks(t);
    if (t % 15 == 7 || t == tasks - 1) AddPaiJob(t, pool, agent, incarnations[agent_index], pid);
    if (t % 7 == 6) {
      Kill(task, "", "");
      Exit(task, "", "", std::nullopt, std::nullopt, "killed while queued");
      continue;
    }
    // Every twelfth task (with two agents of a pool to spare) takes two whole agents.
    const size_t partner = (agent_index + 2) % static_cast<size_t>(agents);
    const bool gang = t % 12 == 0 && agents >= 3 && partner != agent_index;
    if (gang) {
      AssignGang(task, allocation,
                 {Part(agent, incarnations[agent_index], {0, 1, 2, 3}),
                  Part("agent-" + std::to_string(partner), incarnations[partner], {0, 1, 2, 3})});
    } else {
      Assign(task, allocation, agent, incarnations[agent_index], {t % 4, (t + 1) % 4});
    }
    if (t % 11 == 10) Unknown();
    Start(task, allocation, agent, ++pid);
    if (t % 8 == 3) {
      // Preempted, released back to the queue, and placed again on idle slots (backfilled).
      Preempt(task, allocation, agent, incarnations[agent_index], "make room for a job ahead",
              time_of(events_.size() - 1) + 60'000'000);
      Release(task, allocation, "preempted; exited with code 0; back in the queue");
      allocation += "-2";
      Assign(task, allocation, agent, incarnations[agent_index], {t % 4},
             "backfilled on idle slots")
          .mutable_allocation_assigned()
          ->set_backfilled(true);
      Start(task, allocation, agent, ++pid);
    }
    if (gang && t % 24 == 0) {
      PartExit(task, allocation, "agent-" + std::to_string(partner), 0);
    }
    if (t % 5 == 4) {
      Kill(task, allocation, agent);
      Exit(task, allocation, agent, std::nullopt, 9, "killed");
    } else if (t % 3 != 1) {  // every third task is left running
      Exit(task, allocation, agent, t % 13 == 0 ? 1 : 0, std::nullopt, "exited");
    }
    if (t % 9 == 5 && t >= 9) {  // an ended task's logs go (log retention)
      events::Envelope expired;
      expired.mutable_task_logs_expired()->add_task_ids("task-" + std::to_string(t - 9));
      expired.mutable_task_logs_expired()->set_reason("log_retention_days 0 (master.yaml)");
      Stamp(std::move(expired));
    }
    if (t % 9 == 1) SaveTemplate("template-" + std::to_string(t % 4), "description: t" + id);
    if (t % 9 == 8) DeleteTemplate("template-" + std::to_string(t % 4));
    // Users come and go: created, logged in and out, renamed, deactivated, failing a login.
    const int32_t user = 10 + t / 7;
    const std::string session = "session-" + id;
    if (t % 7 == 0) CreateUser(user, "user-" + id, t % 14 == 0);
    if (t % 7 == 1) StartSession(session, user, time_of(events_.size() - 1) + 3'600'000'000);
    if (t % 7 == 2) FailLogin("user-" + id);
    if (t % 7 == 3) EndSession("session-" + std::to_string(t - 2), user, "logout");
    if (t % 7 == 4) ChangePassword(user, "$argon2id$fake-new-hash-" + id);
    if (t % 7 == 5) RenameUser(user, "renamed-" + id);
    if (t % 14 == 6) SetUserActive(user, false);
    if (t == tasks / 2) {
      Disable("agent-0", /*drain=*/true);
      Claim(epoch_ + 1);
      set_epoch(epoch_ - 1);  // a straggler of the old master, fenced off
      Submit("ghost-" + id, "ghost-job-" + id, "default", 1, 1);
      set_epoch(epoch_ + 1);
      Enable("agent-0");
      if (agents > 1) {
        Disconnect("agent-1", "inc-1");
        Register("agent-1", "inc-2", pools[1], 4);
        incarnations[1] = "inc-2";
      }
    }
  }
  SaveTemplate("workload", "description: " + std::to_string(tasks) + " tasks");
  CreateModel(static_cast<int32_t>(last_experiment_id_) + 1, "workload",
              std::to_string(tasks) + " tasks");
  CreateUser(1, "workload-of-" + std::to_string(tasks) + "-tasks", true);
  AddWebhooks(-tasks);  // one more webhook, named after the workload
  Claim(epoch_ + 1);
}

void History::AddWebhooks(int t) {
  const int64_t webhook_id = t < 0 ? 100000 : t / 10 + 1;
  if (t < 0 || t % 10 == 3) {
    events::Envelope event;
    auto* created = event.mutable_webhook_created();
    created->set_webhook_id(webhook_id);
    created->set_name("hook-" + std::to_string(t));
    created->set_url("https://hooks.example/services/" + std::to_string(t));
    created->set_type(t % 20 == 3 ? events::WEBHOOK_TYPE_SLACK : events::WEBHOOK_TYPE_DEFAULT);
    created->set_mode(events::WEBHOOK_MODE_WORKSPACE);
    auto* trigger = created->add_triggers();
    trigger->set_trigger_id(webhook_id);
    trigger->set_type(events::TRIGGER_TYPE_EXPERIMENT_STATE_CHANGE);
    trigger->set_condition_json(R"({"state":"COMPLETED"})");
    Stamp(std::move(event));
    return;
  }
  if (t % 10 == 6 || t % 10 == 8) {
    events::Envelope event;
    auto* delivery = event.mutable_webhook_deliveries_recorded()->add_deliveries();
    delivery->set_source_offset(events_.size() - 1);
    delivery->set_trigger_id(webhook_id);
    delivery->set_webhook_id(webhook_id);
    const bool delivered = t % 10 == 6;
    delivery->set_outcome(delivered ? events::WEBHOOK_DELIVERY_OUTCOME_DELIVERED
                                    : events::WEBHOOK_DELIVERY_OUTCOME_GAVE_UP);
    delivery->set_http_status(delivered ? 200 : 503);
    delivery->set_attempts(delivered ? 1 : 5);
    Stamp(std::move(event));
  }
  if (t % 20 == 7) {
    events::Envelope event;
    event.mutable_webhook_updated()->set_webhook_id(webhook_id);
    event.mutable_webhook_updated()->set_url("https://hooks.example/moved/" + std::to_string(t));
    Stamp(std::move(event));
  }
  if (t % 30 == 9) {
    events::Envelope event;
    event.mutable_webhook_deleted()->set_webhook_id(webhook_id);
    Stamp(std::move(event));
  }
}

}  // namespace cairn::testing
