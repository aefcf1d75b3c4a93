// Configuration templates (`det template set/list/describe`), read from the templates projection.
#pragma once

#include "api/call.h"

namespace cairn::api {

net::Response ListTemplates(Call& call);   // GET /api/v1/templates
net::Response GetTemplate(Call& call);     // GET /api/v1/templates/{name}
net::Response CreateTemplate(Call& call);  // POST /api/v1/templates/{name}
net::Response UpdateTemplate(Call& call);  // PATCH /api/v1/templates/{name}
net::Response DeleteTemplate(Call& call);  // DELETE /api/v1/templates/{name}

}  // namespace cairn::api
