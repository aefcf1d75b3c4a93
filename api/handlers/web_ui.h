// The web UI (web/), served by the master on the API's own origin: the page at "/", its files
// under /ui/, and Debian's Chart.js at /ui/vendor/chart.js. Public, like any page a browser must
// load before it can log in: the data comes from the API's authenticated routes.
#pragma once

#include "api/call.h"

namespace cairn::api {

net::Response WebUiPage(Call& call);   // GET /
net::Response WebUiFile(Call& call);   // GET /ui/{rest...}
net::Response WebUiChart(Call& call);  // GET /ui/vendor/chart.js

}  // namespace cairn::api
