#include "commands/pai/pai_job.h"

#include <algorithm>
#include <nlohmann/json.hpp>
#include <regex>

#include "events/limits.h"

namespace cairn::commands::pai {
namespace {

using nlohmann::json;

Status Invalid(const std::string& field, const std::string& what) {
  return Status::InvalidArgument(field + " " + what);
}

bool Matches(const std::string& text, const char* pattern) {
  return std::regex_match(text, std::regex(pattern));
}

// The seed's table: a field is a String or an Integer, required or optional.
class Fields {
 public:
  Fields(const json& object, std::string prefix) : object_(object), prefix_(std::move(prefix)) {}

  std::string Name(const std::string& key) const { return prefix_ + key; }

  Status CheckKnown(std::initializer_list<const char*> known) const {
    for (const auto& [key, value] : object_.items()) {
      if (std::none_of(known.begin(), known.end(), [&](const char* k) { return key == k; })) {
        std::string list;
        for (const char* k : known) list += (list.empty() ? "" : ", ") + std::string(k);
        return Invalid(Name(key), "is not a field of an OpenPAI job here (known: " + list + ")");
      }
    }
    return Status::Ok();
  }

  Result<std::string> String(const std::string& key, bool required,
                             const char* pattern = nullptr) const {
    auto it = object_.find(key);
    if (it == object_.end() || it->is_null()) {
      if (required) return Invalid(Name(key), "is required");
      return std::string();
    }
    if (!it->is_string()) return Invalid(Name(key), "must be a string");
    std::string value = it->get<std::string>();
    if (required && value.empty()) return Invalid(Name(key), "must not be empty");
    if (pattern != nullptr && !Matches(value, pattern)) {
      return Invalid(Name(key), "must match " + std::string(pattern) + ", got '" + value + "'");
    }
    return value;
  }

  Result<int32_t> Integer(const std::string& key, bool required, int64_t minimum,
                          int64_t maximum = INT32_MAX) const {
    auto it = object_.find(key);
    if (it == object_.end() || it->is_null()) {
      if (required) return Invalid(Name(key), "is required");
      return 0;
    }
    if (!it->is_number_integer()) return Invalid(Name(key), "must be an integer");
    const int64_t value = it->get<int64_t>();
    if (value < minimum) {
      return Invalid(Name(key), "must be at least " + std::to_string(minimum) + ", got " +
                                    std::to_string(value));
    }
    if (value > maximum) {
      return Invalid(Name(key), "must be at most " + std::to_string(maximum) + ", got " +
                                    std::to_string(value));
    }
    return static_cast<int32_t>(value);
  }

 private:
  const json& object_;
  std::string prefix_;
};

constexpr const char* kJobNamePattern = R"(^[A-Za-z0-9\-._~]+$)";
constexpr const char* kRoleNamePattern = R"(^[A-Za-z0-9._~]+$)";

Result<events::PaiTaskRole> ParseRole(const json& node, const std::string& where) {
  if (!node.is_object()) return Invalid(where, "must be an object");
  Fields fields(node, where + ".");
  CAIRN_RETURN_IF_ERROR(fields.CheckKnown(
      {"name", "taskNumber", "cpuNumber", "memoryMB", "gpuNumber", "portList", "command"}));
  events::PaiTaskRole role;
  CAIRN_ASSIGN_OR_RETURN(std::string name, fields.String("name", true, kRoleNamePattern));
  if (name.size() > kMaxNameLength) {
    return Invalid(fields.Name("name"),
                   "must be at most " + std::to_string(kMaxNameLength) + " characters");
  }
  role.set_name(name);
  CAIRN_ASSIGN_OR_RETURN(int32_t tasks, fields.Integer("taskNumber", true, 1, kMaxTasksPerJob));
  role.set_task_number(tasks);
  CAIRN_ASSIGN_OR_RETURN(int32_t cpus, fields.Integer("cpuNumber", true, 1));
  role.set_cpu_number(cpus);
  CAIRN_ASSIGN_OR_RETURN(int32_t memory, fields.Integer("memoryMB", true, 100));
  role.set_memory_mb(memory);
  CAIRN_ASSIGN_OR_RETURN(int32_t gpus, fields.Integer("gpuNumber", true, 0, kMaxSlotsPerTask));
  role.set_gpu_number(gpus);
  CAIRN_ASSIGN_OR_RETURN(std::string command, fields.String("command", true));
  role.set_command(command);
  auto ports = node.find("portList");
  if (ports != node.end() && !ports->is_null()) {
    if (!ports->is_array()) return Invalid(fields.Name("portList"), "must be a list");
    std::set<std::string> labels;
    int64_t total = 0;
    for (size_t i = 0; i < ports->size(); ++i) {
      const std::string at = fields.Name("portList") + "[" + std::to_string(i) + "]";
      const json& entry = (*ports)[i];
      if (!entry.is_object()) return Invalid(at, "must be an object");
      Fields port(entry, at + ".");
      CAIRN_RETURN_IF_ERROR(port.CheckKnown({"label", "beginAt", "portNumber"}));
      events::PaiPortRequest request;
      CAIRN_ASSIGN_OR_RETURN(std::string label, port.String("label", true, kRoleNamePattern));
      if (!labels.insert(label).second) {
        return Invalid(port.Name("label"), "'" + label + "' is used twice in the role");
      }
      request.set_label(label);
      CAIRN_ASSIGN_OR_RETURN(int32_t begin, port.Integer("beginAt", true, 0, 65535));
      request.set_begin_at(begin);
      CAIRN_ASSIGN_OR_RETURN(int32_t count, port.Integer("portNumber", true, 1, 100));
      if (begin > 0 && begin + count - 1 > 65535) {
        return Invalid(at, "asks for ports past 65535");
      }
      total += count;
      request.set_port_number(count);
      *role.add_port_list() = std::move(request);
    }
    if (total > 100) return Invalid(fields.Name("portList"), "asks for more than 100 ports");
  }
  return role;
}

}  // namespace

std::string ExpandVariables(const std::string& text,
                            const std::map<std::string, std::string>& values) {
  std::string out;
  for (size_t i = 0; i < text.size();) {
    if (text[i] != '$') {
      out += text[i++];
      continue;
    }
    const bool braced = i + 1 < text.size() && text[i + 1] == '{';
    size_t start = i + (braced ? 2 : 1);
    size_t end = start;
    while (end < text.size() &&
           (std::isalnum(static_cast<unsigned char>(text[end])) || text[end] == '_')) {
      ++end;
    }
    auto value = values.find(text.substr(start, end - start));
    const bool closed = !braced || (end < text.size() && text[end] == '}');
    if (end == start || value == values.end() || !closed) {
      out += text[i++];
      continue;
    }
    out += value->second;
    i = end + (braced ? 1 : 0);
  }
  return out;
}

Result<events::PaiJobSubmitted> ParseJob(const std::string& body, const JobContext& context) {
  json document = json::parse(body, nullptr, false);
  if (document.is_discarded()) return Status::InvalidArgument("the job is not valid JSON");
  if (!document.is_object()) return Status::InvalidArgument("the job must be a JSON object");
  Fields fields(document, "");
  CAIRN_RETURN_IF_ERROR(fields.CheckKnown({"jobName", "image", "authFile", "dataDir", "outputDir",
                                           "codeDir", "virtualCluster", "taskRoles", "gpuType",
                                           "killAllOnCompletedTaskNumber", "retryCount"}));
  events::PaiJobSubmitted job;
  CAIRN_ASSIGN_OR_RETURN(std::string name, fields.String("jobName", true, kJobNamePattern));
  if (name.size() > kMaxNameLength) {
    return Invalid("jobName", "must be at most " + std::to_string(kMaxNameLength) + " characters");
  }
  job.set_job_name(name);
  job.set_username(context.username);
  CAIRN_ASSIGN_OR_RETURN(std::string image, fields.String("image", true));
  job.set_image(image);
  CAIRN_ASSIGN_OR_RETURN(std::string auth_file, fields.String("authFile", false));
  if (!auth_file.empty()) {
    // An HDFS file Cairn cannot read; a half-read credential would fail later and obscurely.
    return Status::NotSupported(
        "authFile is not supported: Cairn does not read registry credentials from HDFS; use an "
        "image the agents have (an OCI archive in their --image-dir) or a Determined command's "
        "environment.registry_auth");
  }
  job.set_auth_file(auth_file);
  CAIRN_ASSIGN_OR_RETURN(std::string cluster, fields.String("virtualCluster", false));
  job.set_virtual_cluster(cluster.empty() ? "default" : cluster);
  CAIRN_ASSIGN_OR_RETURN(std::string gpu_type, fields.String("gpuType", false));
  job.set_gpu_type(gpu_type);
  CAIRN_ASSIGN_OR_RETURN(int32_t kill_all,
                         fields.Integer("killAllOnCompletedTaskNumber", false, 0));
  job.set_kill_all_on_completed_task_number(kill_all);
  CAIRN_ASSIGN_OR_RETURN(int32_t retries, fields.Integer("retryCount", false, 0, kMaxRetryCount));
  job.set_retry_count(retries);
  job.set_default_fs_uri(context.default_fs_uri);

  auto roles = document.find("taskRoles");
  if (roles == document.end() || roles->is_null()) return Invalid("taskRoles", "is required");
  if (!roles->is_array()) return Invalid("taskRoles", "must be a list");
  if (roles->empty()) return Invalid("taskRoles", "must have at least one task role");
  std::set<std::string> names;
  int64_t tasks = 0;
  for (size_t i = 0; i < roles->size(); ++i) {
    const std::string where = "taskRoles[" + std::to_string(i) + "]";
    CAIRN_ASSIGN_OR_RETURN(events::PaiTaskRole role, ParseRole((*roles)[i], where));
    if (!names.insert(role.name()).second) {
      return Invalid(where + ".name", "'" + role.name() + "' is the name of another task role");
    }
    tasks += role.task_number();
    *job.add_task_roles() = std::move(role);
  }
  if (tasks > kMaxTasksPerJob) {
    return Invalid("taskRoles", "ask for " + std::to_string(tasks) + " tasks; at most " +
                                    std::to_string(kMaxTasksPerJob) + " per job");
  }
  if (kill_all > tasks) {
    return Invalid("killAllOnCompletedTaskNumber", "is " + std::to_string(kill_all) +
                                                       " but the job has only " +
                                                       std::to_string(tasks) + " tasks");
  }

  // $PAI_* in the job's own fields: the job-level values, known at submission.
  const std::map<std::string, std::string> values = {
      {"PAI_DEFAULT_FS_URI", context.default_fs_uri},
      {"PAI_JOB_NAME", name},
      {"PAI_USER_NAME", context.username},
      {"PAI_JOB_VC_NAME", job.virtual_cluster()},
  };
  CAIRN_ASSIGN_OR_RETURN(std::string data_dir, fields.String("dataDir", false));
  CAIRN_ASSIGN_OR_RETURN(std::string output_dir, fields.String("outputDir", false));
  CAIRN_ASSIGN_OR_RETURN(std::string code_dir, fields.String("codeDir", false));
  if (output_dir.empty()) output_dir = "$PAI_DEFAULT_FS_URI/Output/$PAI_JOB_NAME";
  job.set_data_dir(ExpandVariables(data_dir, values));
  job.set_output_dir(ExpandVariables(output_dir, values));
  job.set_code_dir(ExpandVariables(code_dir, values));
  job.set_config_json(document.dump(2));
  return job;
}

std::string MemberTaskId(const std::string& job_id, int32_t attempt, const std::string& role,
                         int32_t index) {
  std::string safe_role = role;
  std::replace(safe_role.begin(), safe_role.end(), '~', '-');
  return job_id + "." + std::to_string(attempt) + "." + safe_role + "." + std::to_string(index);
}

std::vector<events::Envelope> AttemptSubmissions(const events::PaiJobSubmitted& job,
                                                 int32_t attempt,
                                                 const events::Resources& resources) {
  int32_t gang_size = 0;
  int32_t gang_slots = 0;
  std::string role_list;
  for (const auto& role : job.task_roles()) {
    gang_size += role.task_number();
    gang_slots += role.task_number() * role.gpu_number();
    role_list += (role_list.empty() ? "" : ",") + role.name();
  }
  const std::pair<const char*, std::string> job_values[] = {
      {"PAI_DEFAULT_FS_URI", job.default_fs_uri()},
      {"PAI_JOB_NAME", job.job_name()},
      {"PAI_JOB_VC_NAME", job.virtual_cluster()},
      {"PAI_USER_NAME", job.username()},
      {"PAI_DATA_DIR", job.data_dir()},
      {"PAI_OUTPUT_DIR", job.output_dir()},
      {"PAI_CODE_DIR", job.code_dir()},
      {"PAI_JOB_TASK_COUNT", std::to_string(gang_size)},
      {"PAI_JOB_TASK_ROLE_COUNT", std::to_string(job.task_roles_size())},
      {"PAI_JOB_TASK_ROLE_LIST", role_list},
      {"PAI_KILL_ALL_ON_COMPLETED_TASK_NUM",
       std::to_string(job.kill_all_on_completed_task_number())},
  };
  std::vector<events::Envelope> submissions;
  int32_t rank = 0;
  for (const auto& role : job.task_roles()) {
    for (int32_t index = 0; index < role.task_number(); ++index, ++rank) {
      events::Envelope event;
      auto* submitted = event.mutable_task_submitted();
      submitted->set_task_id(MemberTaskId(job.job_id(), attempt, role.name(), index));
      submitted->set_job_id(job.job_id());
      submitted->set_workspace_id(job.workspace_id());
      submitted->set_job_name(job.job_name());
      submitted->set_config_json(job.config_json());
      auto* ref = submitted->mutable_pai();
      ref->set_job_id(job.job_id());
      ref->set_attempt(attempt);
      ref->set_task_role(role.name());
      ref->set_task_index(index);
      auto* spec = submitted->mutable_spec();
      spec->set_task_type(events::TASK_TYPE_COMMAND);
      spec->add_entrypoint("/bin/sh");
      spec->add_entrypoint("-c");
      spec->add_entrypoint(role.command());
      spec->set_user(job.username());
      spec->set_description("OpenPAI job " + job.job_name() + ", task " + role.name() + "[" +
                            std::to_string(index) + "], attempt " + std::to_string(attempt));
      // One image for CPU and GPU tasks: OpenPAI names one per job.
      spec->set_image_cpu(job.image());
      spec->set_image_gpu(job.image());
      spec->set_cpus(role.cpu_number());
      spec->set_memory_mb(role.memory_mb());
      for (const auto& [name, value] : job_values) {
        spec->add_environment_variables(std::string(name) + "=" + value);
      }
      const std::pair<const char*, std::string> role_values[] = {
          {"PAI_CURRENT_TASK_ROLE_NAME", role.name()},
          {"PAI_CURRENT_TASK_ROLE_TASK_COUNT", std::to_string(role.task_number())},
          {"PAI_CURRENT_TASK_ROLE_CPU_COUNT", std::to_string(role.cpu_number())},
          {"PAI_CURRENT_TASK_ROLE_MEM_MB", std::to_string(role.memory_mb())},
          {"PAI_CURRENT_TASK_ROLE_GPU_COUNT", std::to_string(role.gpu_number())},
          {"PAI_CURRENT_TASK_ROLE_CURRENT_TASK_INDEX", std::to_string(index)},
      };
      for (const auto& [name, value] : role_values) {
        spec->add_environment_variables(std::string(name) + "=" + value);
      }
      auto* asked = submitted->mutable_resources();
      *asked = resources;
      asked->set_slots(role.gpu_number());
      asked->set_gang_size(gang_size);
      asked->set_gang_rank(rank);
      if (rank == 0) asked->set_gang_slots(gang_slots);
      submissions.push_back(std::move(event));
    }
  }
  return submissions;
}

std::vector<std::string> PlacementVariables(const events::PaiJobSubmitted& job,
                                            const std::vector<PlacedMember>& placed, size_t which) {
  const PlacedMember& self = placed[which];
  std::vector<std::string> variables;
  variables.push_back("PAI_CONTAINER_HOST_IP=" + self.host_ip);
  std::string all_ports;
  for (const auto& ports : self.ports) {
    std::string list;
    for (int32_t port : ports.ports()) list += (list.empty() ? "" : ",") + std::to_string(port);
    all_ports += (all_ports.empty() ? "" : ";") + ports.label() + ":" + list;
    variables.push_back("PAI_CONTAINER_HOST_" + ports.label() + "_PORT_LIST=" + list);
  }
  variables.push_back("PAI_CONTAINER_HOST_PORT_LIST=" + all_ports);
  for (int32_t role = 0; role < job.task_roles_size(); ++role) {
    std::vector<const PlacedMember*> tasks;
    for (const auto& member : placed) {
      if (member.role == role) tasks.push_back(&member);
    }
    std::sort(tasks.begin(), tasks.end(),
              [](const PlacedMember* a, const PlacedMember* b) { return a->index < b->index; });
    std::string hosts;
    for (const PlacedMember* task : tasks) {
      std::string host = task->host_ip;
      if (!task->ports.empty() && task->ports[0].ports_size() > 0) {
        host += ":" + std::to_string(task->ports[0].ports(0));
      }
      hosts += (hosts.empty() ? "" : ",") + host;
    }
    variables.push_back("PAI_TASK_ROLE_" + job.task_roles(role).name() + "_HOST_LIST=" + hosts);
  }
  return variables;
}

Result<std::vector<events::PaiPorts>> ChoosePorts(const events::PaiTaskRole& role,
                                                  std::set<int32_t>& in_use) {
  std::vector<events::PaiPorts> chosen;
  for (const auto& request : role.port_list()) {
    events::PaiPorts ports;
    ports.set_label(request.label());
    if (request.begin_at() > 0) {
      for (int32_t i = 0; i < request.port_number(); ++i) {
        const int32_t port = request.begin_at() + i;
        if (!in_use.insert(port).second) {
          return Status::FailedPrecondition("port " + std::to_string(port) + " (" +
                                            request.label() + ") is taken");
        }
        ports.add_ports(port);
      }
    } else {
      int32_t port = kAnyPortBegin;
      for (int32_t i = 0; i < request.port_number(); ++i) {
        while (port < kAnyPortEnd && in_use.count(port)) ++port;
        if (port >= kAnyPortEnd) {
          return Status::FailedPrecondition("no free port left in " +
                                            std::to_string(kAnyPortBegin) + "-" +
                                            std::to_string(kAnyPortEnd - 1));
        }
        in_use.insert(port);
        ports.add_ports(port);
      }
    }
    chosen.push_back(std::move(ports));
  }
  return chosen;
}

}  // namespace cairn::commands::pai
