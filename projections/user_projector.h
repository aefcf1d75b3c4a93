// The users projection: "user/<id, 10 digits>" -> views::UserView, "username/<name>" -> the id
// (decimal), "session/<token SHA-256>" -> views::SessionView, ended sessions included, and
// "token/<id, 10 digits>" -> views::AccessTokenView, revoked and expired ones included.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "projections/projector.h"
#include "views.pb.h"

namespace cairn::projections {

inline const std::string kUsersProjector = "users";

class UserProjector : public Projector {
 public:
  const std::string& name() const override { return kUsersProjector; }
  Status Apply(const Envelope& event, ViewStore& store) const override;
};

Result<std::optional<views::UserView>> ReadUser(ViewReader& reader, int32_t user_id);
Result<std::optional<views::UserView>> ReadUserByName(ViewReader& reader,
                                                      const std::string& username);
// Every user, by id.
Result<std::vector<views::UserView>> ReadUsers(ViewReader& reader);
// Every access token, by id.
Result<std::vector<views::AccessTokenView>> ReadAccessTokens(ViewReader& reader);
Result<std::optional<views::AccessTokenView>> ReadAccessToken(ViewReader& reader, int32_t token_id);

}  // namespace cairn::projections
