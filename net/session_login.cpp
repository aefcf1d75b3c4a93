#include "net/session_login.h"

#include <nlohmann/json.hpp>

namespace cairn::net {

Result<std::string> LogIn(Client& client, const std::string& username,
                          const std::string& password) {
  const nlohmann::json body = {{"username", username}, {"password", password}, {"isHashed", false}};
  CAIRN_ASSIGN_OR_RETURN(ClientResponse response,
                         client.Request("POST", "/api/v1/auth/login", body.dump(),
                                        {{"Content-Type", "application/json"}}));
  if (response.status != 200) {
    return Status::Unauthenticated("login as " + username + " answered " +
                                   std::to_string(response.status) + ": " + response.body);
  }
  auto answer = nlohmann::json::parse(response.body, nullptr, /*allow_exceptions=*/false);
  if (!answer.is_object() || !answer.contains("token") || !answer["token"].is_string()) {
    return Status::Internal("login answer without a token: " + response.body.substr(0, 200));
  }
  std::string token = answer["token"].get<std::string>();
  client.SetDefaultHeader("Authorization", "Bearer " + token);
  return token;
}

}  // namespace cairn::net
