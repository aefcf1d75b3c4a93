// The audit trail over REST (admins only): who did what, when, read from the log through
// replay/ (replay/audit.h), oldest first.
#pragma once

#include "api/call.h"

namespace cairn::api {

// GET /api/v1/audit?actor=WHO&entity=WHAT&since=T&until=T&fromOffset=N&toOffset=N
//                   &includeSystem=true&limit=N
// (offsets inclusive: the web UI's history asks for the events around a moment)
// -> {"records": [{offset, time, actor, action, subjects, event}], "truncated": bool}
net::Response ListAudit(Call& call);

}  // namespace cairn::api
