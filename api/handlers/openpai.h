// OpenPAI's REST API (v1) for OpenPAI jobs (shared/reference/openpai-rest.md): submit, list,
// status, config, stop, and virtual clusters, with OpenPAI's shapes and its {code, message}
// errors. A job is a Cairn job of one gang per attempt (commands/pai/), so it is also in the job
// queue, the audit trail and replay. Every route is also served under /pai.
#pragma once

#include "api/call.h"

namespace cairn::api {

http::Response PaiToken(Call& call);                 // POST /api/v1/token
http::Response PaiListJobs(Call& call);              // GET /api/v1/jobs[?username=U]
http::Response PaiListUserJobs(Call& call);          // GET /api/v1/user/{username}/jobs
http::Response PaiSubmitJob(Call& call);             // POST /api/v1/user/{username}/jobs
http::Response PaiJobStatus(Call& call);             // GET /api/v1/user/{username}/jobs/{jobName}
http::Response PaiJobConfig(Call& call);             // GET .../{jobName}/config
http::Response PaiJobSsh(Call& call);                // GET .../{jobName}/ssh (not supported)
http::Response PaiExecutionType(Call& call);         // PUT .../{jobName}/executionType
http::Response PaiVirtualClusters(Call& call);       // GET /api/v1/virtual-clusters
http::Response PaiVirtualCluster(Call& call);        // GET /api/v1/virtual-clusters/{vc}
http::Response PaiChangeVirtualCluster(Call& call);  // PUT/DELETE .../{vc} (not supported)
http::Response PaiChangeUser(Call& call);            // PUT /api/v1/user (not supported)

}  // namespace cairn::api
