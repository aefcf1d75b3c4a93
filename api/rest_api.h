// Cairn's REST API: the route table (route_table.h) over the services the master hands it
// (services.h). Reads come from projections; writes become commands for the single writer and
// answer once their events are durable, with the offset in the `Cairn-Offset` header; any read
// waits until the projections reached `?minOffset=N` (or header `Cairn-Min-Offset`), so a client
// always reads its own writes.
#pragma once

#include <memory>

#include "api/bulk_reads.h"
#include "api/render_cache.h"
#include "api/router.h"
#include "api/services.h"
#include "net/http_types.h"

namespace cairn::api {

// Thread-safe: Handle may run on many connection threads at once.
class RestApi {
 public:
  explicit RestApi(Services services);

  net::Response Handle(const net::Request& request) const;
  // Router::AdmitBody: for the server, before it reads a request's body.
  net::BodyAdmission AdmitBody(const net::Request& head) const;
  const Router& router() const { return router_; }

 private:
  std::unique_ptr<BulkReadPool> bulk_reads_;
  std::unique_ptr<RenderCache> renders_;
  Services services_;
  Router router_;
};

}  // namespace cairn::api
