#include "api/render/user_json.h"

#include "base/clock.h"

namespace cairn::api {

using nlohmann::json;

json UserJson(const views::UserView& user) {
  json out = {{"id", user.id()},
              {"username", user.username()},
              {"displayName", user.display_name()},
              {"admin", user.admin()},
              {"active", user.active()},
              {"remote", false},
              {"modifiedAt", FormatRfc3339(user.modified_unix_micros())}};
  if (user.has_agent_user_group()) {
    const auto& linked = user.agent_user_group();
    out["agentUserGroup"] = {{"agentUid", linked.uid()},
                             {"agentGid", linked.gid()},
                             {"agentUser", linked.user()},
                             {"agentGroup", linked.group()}};
  }
  return out;
}

json UserJson(const User& user) {
  return {{"id", user.id},       {"username", user.username}, {"displayName", user.display_name},
          {"admin", user.admin}, {"active", user.active},     {"remote", false}};
}

}  // namespace cairn::api
