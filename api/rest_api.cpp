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

// Two workers: lists use both cores when nothing else wants them. Nice 10: against a thread at
// 0 a worker gets about a tenth of a core.
constexpr int kBulkReadThreads = 2;
constexpr int kBulkReadNice = 10;
// Rendered entities kept for lists: a few lists' worth of a big cluster's.
constexpr size_t kRenderCacheBytes = size_t{64} << 20;

}  // namespace

RestApi::RestApi(Services services)
    : bulk_reads_(std::make_unique<BulkReadPool>(kBulkReadThreads, kBulkReadNice)),
      renders_(std::make_unique<RenderCache>(kRenderCacheBytes)),
      services_(std::move(services)),
      router_(BuildRouter()) {
  services_.bulk_reads = bulk_reads_.get();
  services_.renders = renders_.get();
}

net::Response RestApi::Handle(const net::Request& request) const {
  return router_.Handle(services_, request);
}

net::BodyAdmission RestApi::AdmitBody(const net::Request& head) const {
  return router_.AdmitBody(services_, head);
}

}  // namespace cairn::api
