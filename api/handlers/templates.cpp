#include "api/handlers/templates.h"

#include "api/rest_util.h"
#include "base/yaml_json.h"

namespace cairn::api {

using nlohmann::json;

namespace {

// A template is shared configuration, not anyone's work: under roles only admins see its
// secrets' values; under basic, as in Determined, every reader does.
json TemplateJson(const events::TemplateSaved& saved, const Call& call) {
  auto config = YamlTextToJson(saved.config_yaml(), "template");
  json shown = config.ok() ? json(*config) : json::object();
  RedactConfig(shown, call.tenancy().RolesApply() ? call.AudienceFor("") : Audience::kOwner);
  return {{"name", saved.name()}, {"config", shown}, {"workspaceId", saved.workspace_id()}};
}

net::Response GetTemplateNamed(Call& call, const std::string& name) {
  auto saved = call.services().projections->GetTemplate(name);
  if (!saved.ok()) return Error(saved.status());
  // One the caller may not see is not there for them (Determined answers the same).
  if (!*saved || !call.CanView((*saved)->workspace_id())) {
    return Error(Status::NotFound("template " + name + " not found"));
  }
  return Ok({{"template", TemplateJson(**saved, call)}});
}

net::Response SaveTemplate(Call& call, commands::SaveTemplate::Mode mode) {
  const std::string& name = call.Param("name");
  auto body = call.Body();
  if (!body.ok()) return Error(body.status());
  commands::SaveTemplate command;
  command.name = name;
  command.mode = mode;
  json config = *body;
  if (mode == commands::SaveTemplate::Mode::kCreate) {
    if (Status known = CheckKnownKeys(*body, "", {"name", "config", "workspaceId"}); !known.ok()) {
      return Error(known);
    }
    auto body_name = GetString(*body, "name", "name", false);
    if (!body_name.ok()) return Error(body_name.status());
    if (!body_name->empty() && *body_name != name) {
      return Error(Status::InvalidArgument(
          "name '" + *body_name + "' differs from the template in the path, '" + name + "'"));
    }
    auto workspace = GetInt32(*body, "workspaceId", "workspaceId");
    if (!workspace.ok()) return Error(workspace.status());
    // 0 or none: the default workspace, as Determined takes it.
    if (workspace->value_or(0) > 1) {
      if (call.tenancy().FindWorkspace(**workspace) == nullptr || !call.CanView(**workspace)) {
        return Error(Status::NotFound("workspace " + std::to_string(**workspace) + " not found"));
      }
      command.workspace_id = **workspace;
    }
    config = Present(*body, "config") ? body->at("config") : json::object();
  }
  if (config.is_string()) {
    command.config_yaml = config.get<std::string>();
  } else if (config.is_object()) {
    // Within the document limits before it becomes text (a 16 MiB value is refused here, not
    // after it was written out as YAML).
    if (auto bounded = JsonToYamlNode(config, "template"); !bounded.ok()) {
      return Error(bounded.status());
    }
    command.config_yaml = JsonToYamlText(nlohmann::ordered_json(config));
  } else {
    return Error(Status::InvalidArgument("config must be a map (or YAML text)"));
  }
  auto outcome = call.ExecuteAndShow(std::move(command));
  if (!outcome.ok()) return Error(outcome.status());
  return GetTemplateNamed(call, name);
}

}  // namespace

net::Response ListTemplates(Call& call) {
  auto templates = call.services().projections->ListTemplates();
  if (!templates.ok()) return Error(templates.status());
  json list = json::array();
  for (const auto& saved : *templates) {
    if (call.CanView(saved.workspace_id())) list.push_back(TemplateJson(saved, call));
  }
  return Ok(
      {{"templates", list},
       {"pagination", {{"startIndex", 0}, {"endIndex", list.size()}, {"total", list.size()}}}});
}

net::Response GetTemplate(Call& call) { return GetTemplateNamed(call, call.Param("name")); }
net::Response CreateTemplate(Call& call) {
  return SaveTemplate(call, commands::SaveTemplate::Mode::kCreate);
}
net::Response UpdateTemplate(Call& call) {
  return SaveTemplate(call, commands::SaveTemplate::Mode::kUpdate);
}

net::Response DeleteTemplate(Call& call) {
  const std::string& name = call.Param("name");
  // Answer once the templates projection shows it gone, so the caller's next read agrees.
  auto outcome = call.ExecuteAndShow(commands::DeleteTemplate{name});
  if (!outcome.ok()) return Error(outcome.status());
  return Ok(json::object(), outcome->offset);
}

}  // namespace cairn::api
