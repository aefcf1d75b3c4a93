#include "api/router.h"

#include "api/responses.h"
#include "base/encoding.h"
#include "base/sealed_secrets.h"
#include "events/sealing.h"

namespace cairn::api {

const char* AccessName(Access access) {
  switch (access) {
    case Access::kPublic:
      return "public";
    case Access::kUser:
      return "user";
    case Access::kAgent:
      return "agent";
    case Access::kAllocation:
      return "allocation";
    case Access::kUserOrAgent:
      return "user or agent";
    case Access::kProxyUserOrSshTunnel:
      return "user (token or proxy cookie), or a shell's SSH tunnel";
    case Access::kTask:
      return "task (its session token)";
    case Access::kUserOrTask:
      return "user or task";
  }
  return "unknown";
}

namespace {

// "/api/v1/tasks/x%2Fy/logs" -> {"api", "v1", "tasks", "x/y", "logs"}: an escaped slash stays
// inside its segment.
std::vector<std::string> SplitPath(std::string_view target) {
  std::string_view path = target.substr(0, target.find('?'));
  std::vector<std::string> segments;
  size_t start = 0;
  while (start < path.size()) {
    size_t slash = path.find('/', start);
    if (slash == std::string_view::npos) slash = path.size();
    if (slash > start) segments.push_back(net::PercentDecode(path.substr(start, slash - start)));
    start = slash + 1;
  }
  return segments;
}

bool IsParameter(std::string_view segment) {
  return segment.size() > 2 && segment.front() == '{' && segment.back() == '}';
}

}  // namespace

Result<Router> Router::Build(std::vector<Route> routes) {
  Router router;
  for (const Route& route : routes) {
    Compiled compiled;
    compiled.segments = SplitPath(route.pattern);
    // "/" alone is the one pattern without segments (the web UI's page).
    const bool root = std::string_view(route.pattern) == "/";
    if (route.pattern[0] != '/' || (compiled.segments.empty() && !root) ||
        route.handler == nullptr) {
      return Status::InvalidArgument(std::string("malformed route ") + route.pattern);
    }
    for (size_t i = 0; i < compiled.segments.size(); ++i) {
      const std::string& segment = compiled.segments[i];
      if (segment == "{rest...}") {
        if (i + 1 != compiled.segments.size()) {
          return Status::InvalidArgument(std::string("{rest...} must end the route ") +
                                         route.pattern);
        }
        compiled.rest = true;
        compiled.segments.pop_back();
        break;
      }
      if (!IsParameter(segment)) compiled.literals++;
    }
    for (size_t i = 0; i < router.routes_.size(); ++i) {
      if (std::string_view(router.routes_[i].method) == route.method &&
          std::string_view(router.routes_[i].pattern) == route.pattern) {
        return Status::InvalidArgument(std::string("two routes for ") + route.method + " " +
                                       route.pattern);
      }
    }
    router.routes_.push_back(route);
    router.compiled_.push_back(std::move(compiled));
  }
  return router;
}

bool Router::Match(const Compiled& compiled, const std::vector<std::string>& path, Params& params) {
  const size_t fixed = compiled.segments.size();
  if (compiled.rest ? path.size() <= fixed : path.size() != fixed) return false;
  params.clear();
  for (size_t i = 0; i < fixed; ++i) {
    const std::string& segment = compiled.segments[i];
    if (IsParameter(segment)) {
      params[segment.substr(1, segment.size() - 2)] = path[i];
    } else if (segment != path[i]) {
      return false;
    }
  }
  if (compiled.rest) {
    std::string rest;
    for (size_t i = fixed; i < path.size(); ++i) rest += (i == fixed ? "" : "/") + path[i];
    params["rest"] = rest;
  }
  return true;
}

Router::Found Router::Find(std::string_view method, std::string_view target) const {
  const std::vector<std::string> path = SplitPath(target);
  // The most specific patterns that match the path decide; among them a route for the request's
  // method beats a catch-all ("*"). When they are all for other methods, the answer is 405 (a
  // less specific catch-all does not take over).
  Found found;
  int best_literals = -1;
  bool best_exact = false;
  Params params;
  for (size_t i = 0; i < routes_.size(); ++i) {
    if (!Match(compiled_[i], path, params)) continue;
    const int literals = compiled_[i].literals;
    if (literals < best_literals) continue;
    if (literals > best_literals) {
      found.route = nullptr;
      best_literals = literals;
      best_exact = false;
    }
    const std::string_view route_method = routes_[i].method;
    const bool exact = route_method == method;
    if (!exact && route_method != "*") continue;
    if (found.route == nullptr || (exact && !best_exact)) {
      found.route = &routes_[i];
      best_exact = exact;
      found.params = params;
    }
  }
  found.other_method = found.route == nullptr && best_literals >= 0;
  return found;
}

net::BodyAdmission Router::AdmitBody(const Services& services, const net::Request& head) const {
  net::BodyAdmission admission;
  Found found = Find(head.method, head.target);
  if (found.route == nullptr) {
    admission.refusal = Handle(services, head);
    return admission;
  }
  Call call(services, head, std::move(found.params));
  if (Status allowed = call.Authenticate(found.route->access); !allowed.ok()) {
    admission.refusal =
        found.route->errors == ErrorShape::kOpenPai ? OpenPaiError(allowed) : Error(allowed);
    return admission;
  }
  admission.max_body_bytes = found.route->access == Access::kPublic || call.ssh_tunnel()
                                 ? kPublicBodyBytes
                             : found.route->body == BodySize::kLarge ? SIZE_MAX
                                                                     : kSmallBodyBytes;
  return admission;
}

net::Response Router::Handle(const Services& services, const net::Request& request) const {
  // Ids in paths and queries end up in JSON answers and events, which hold only UTF-8.
  bool valid_text = IsValidUtf8(request.path);
  for (const auto& [name, value] : request.query)
    valid_text &= IsValidUtf8(name) && IsValidUtf8(value);
  if (!valid_text) {
    return Error(Status::InvalidArgument("the request path or query is not valid UTF-8"));
  }
  Found found = Find(request.method, request.target);
  if (found.route == nullptr) {
    if (found.other_method) return MethodNotAllowed(request);
    return Error(Status::NotFound("no route for " + request.method + " " + request.path));
  }
  Call call(services, request, std::move(found.params));
  if (Status allowed = call.Admit(found.route->access); !allowed.ok()) {
    return found.route->errors == ErrorShape::kOpenPai ? OpenPaiError(allowed) : Error(allowed);
  }
  // Sealed values are the log's own (events/sealing.h), opened for the work they were sealed for.
  // One copied out of the log (Kafka's topics, a backup) into a caller's own config, template or
  // webhook would have the master open it for the caller's work: refused from everyone but agents
  // (whose log lines are the tasks' own text) and the proxy (a notebook's content).
  const bool may_carry_sealed = found.route->access == Access::kAgent ||
                                found.route->access == Access::kProxyUserOrSshTunnel ||
                                call.agent_caller();
  if (!may_carry_sealed && HoldsSealedValue(request.body)) {
    Status refused = Status::InvalidArgument(
        "the request holds a sealed value (" + std::string(kSealedPrefix) +
        "...): sealed credentials are the log's own and are never accepted back; give the "
        "credential itself");
    return found.route->errors == ErrorShape::kOpenPai ? OpenPaiError(refused) : Error(refused);
  }
  net::Response response = found.route->handler(call);
  // A signed-in user refused a change is kept for the audit trail (AccessDenied). Reads are not:
  // a refused read changes nothing and would let anyone fill the log.
  if (response.status == 403 && !call.user().username.empty() && request.method != "GET" &&
      request.method != "HEAD") {
    call.RecordAccessDenied(response);
  }
  return response;
}

}  // namespace cairn::api
