#include "api/rest_api.h"

#include <cstdlib>

#include "api/route_table.h"

namespace cairn::api {

namespace {

Router BuildRouter() {
  auto router = Router::Build(RouteTable());
  // The table is code: a malformed entry is a bug that every test run would show at once.
  if (!router.ok()) std::abort();
  return std::move(router).value();
}

}  // namespace

RestApi::RestApi(Services services) : services_(std::move(services)), router_(BuildRouter()) {}

http::Response RestApi::Handle(const http::Request& request) const {
  return router_.Handle(services_, request);
}

}  // namespace cairn::api
