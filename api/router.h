// The REST API's route table: every route is one entry — method, path pattern, who may call it,
// and its handler — so reading api/route_table.cpp lists the whole API. Matching is by path
// segments; the most specific pattern wins (more literal segments), and a path that matches a
// route under another method is a 405.
#pragma once

#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "api/call.h"
#include "net/http_types.h"

namespace cairn::api {

// Who may call a route. One place enforces it (Router::Handle), and every route must name one.
enum class Access {
  kPublic,       // anyone: the login and the master's public identity
  kUser,         // a user with a live session (a bearer token from POST /api/v1/auth/login)
  kAgent,        // a cairn-agent process: the agent token (agent/PROTOCOL.md)
  kAllocation,   // a task's own process, for its allocation only: the allocation's token
                 // (CAIRN_ALLOCATION_TOKEN; agent/harness/PROTOCOL.md)
  kUserOrAgent,  // either: the event stream, which agents also follow for their placements
  // The proxy to a task's service at /proxy/{id}/: a user as kUser, whose token may also come in
  // the proxy's cookie (a browser reaching a notebook or TensorBoard); or, without any
  // credential, a WebSocket upgrade (Call::ssh_tunnel) that the handler lets reach a ready
  // shell's sshd alone, where the shell's key is the credential (Determined's `det shell open`
  // tunnels SSH without a token).
  kProxyUserOrSshTunnel,
  kTask,        // a process running Determined's package: its task session token
                // (DET_SESSION_TOKEN, base/password.h TaskSessionToken), which names its
                // allocation (Call::task_allocation); the handler checks what it may reach
  kUserOrTask,  // either: reads Determined's package makes and users make too
};
const char* AccessName(Access access);

using RouteHandler = net::Response (*)(Call& call);

// How a route's refusals look: grpc-gateway's {code: <number>, message, details} as Determined
// answers, or OpenPAI's {code: "<Name>Error", message}.
enum class ErrorShape { kDetermined, kOpenPai };

// How much body a route takes: most take one small JSON document; a few take files (a model
// definition, a command's context, the proxy's uploads) or agents' log batches, up to the
// master's max_request_body_bytes.
enum class BodySize { kSmall, kLarge };
inline constexpr size_t kSmallBodyBytes = size_t{4} << 20;
// Any body of a route anyone may call (a login): an anonymous caller's body costs at most this.
inline constexpr size_t kPublicBodyBytes = size_t{64} << 10;

struct Route {
  const char* method;   // "GET", "POST", ...; "*" = any method
  const char* pattern;  // "/api/v1/tasks/{id}/logs"; a last segment "{rest...}" takes 1+ segments
  Access access;
  RouteHandler handler;
  ErrorShape errors = ErrorShape::kDetermined;
  BodySize body = BodySize::kSmall;
};

class Router {
 public:
  // Fails (InvalidArgument) on a malformed pattern or two routes with one method and pattern.
  static Result<Router> Build(std::vector<Route> routes);

  net::Response Handle(const Services& services, const net::Request& request) const;
  // Whether a request whose `head` has arrived may send its body, and how large: the route's
  // access rule checked on the head's credential (so an anonymous body is never read), its
  // BodySize the limit; no route is refused as Handle would refuse it.
  net::BodyAdmission AdmitBody(const Services& services, const net::Request& head) const;

  using Params = std::map<std::string, std::string, std::less<>>;
  struct Found {
    const Route* route = nullptr;  // null: no route for this method (see other_method)
    bool other_method = false;     // the path has routes, under other methods only (405)
    Params params;
  };
  // The route a request for `method` and `target` (a path, with or without a query) goes to.
  Found Find(std::string_view method, std::string_view target) const;

  const std::vector<Route>& routes() const { return routes_; }

 private:
  struct Compiled {
    std::vector<std::string> segments;  // "{name}" for a parameter
    bool rest = false;                  // the last segment takes every remaining one
    int literals = 0;                   // literal segments: the more, the more specific
  };
  // Whether `path` matches `compiled`; fills `params`.
  static bool Match(const Compiled& compiled, const std::vector<std::string>& path, Params& params);

  std::vector<Route> routes_;
  std::vector<Compiled> compiled_;
};

}  // namespace cairn::api
