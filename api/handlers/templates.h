// Configuration templates (`det template set/list/describe`), read from the templates projection.
#pragma once

#include "api/call.h"

namespace cairn::api {

net::Response ListTemplates(Call& call);   // GET /api/v1/templates
net::Response GetTemplate(Call& call);     // GET /api/v1/templates/{name}
net::Response CreateTemplate(Call& call);  // POST /api/v1/templates/{name}
net::Response UpdateTemplate(Call& call);  // PATCH /api/v1/templates/{name}
net::Response DeleteTemplate(Call& call);  // DELETE /api/v1/templates/{name}

// The saved template's YAML text, for merging under a submitted configuration; NotFound when
// there is none the caller may see.
Result<std::string> TemplateText(Call& call, const std::string& name);

}  // namespace cairn::api
