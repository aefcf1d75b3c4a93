// OpenPAI's REST API (v1) for OpenPAI jobs (README.md, "OpenPAI jobs"): submit, list,
// status, config, stop, and virtual clusters, with OpenPAI's shapes and its {code, message}
// errors. A job is a Cairn job of one gang per attempt (commands/pai/), so it is also in the job
// queue, the audit trail and replay. Every route is also served under /pai.
#pragma once

#include "api/call.h"

namespace cairn::api {

net::Response PaiToken(Call& call);                 // POST /api/v1/token
net::Response PaiListJobs(Call& call);              // GET /api/v1/jobs[?username=U]
net::Response PaiListUserJobs(Call& call);          // GET /api/v1/user/{username}/jobs
net::Response PaiSubmitJob(Call& call);             // POST /api/v1/user/{username}/jobs
net::Response PaiJobStatus(Call& call);             // GET /api/v1/user/{username}/jobs/{jobName}
net::Response PaiJobConfig(Call& call);             // GET .../{jobName}/config
net::Response PaiJobSsh(Call& call);                // GET .../{jobName}/ssh (not supported)
net::Response PaiExecutionType(Call& call);         // PUT .../{jobName}/executionType
net::Response PaiVirtualClusters(Call& call);       // GET /api/v1/virtual-clusters
net::Response PaiVirtualCluster(Call& call);        // GET /api/v1/virtual-clusters/{vc}
net::Response PaiChangeVirtualCluster(Call& call);  // PUT/DELETE .../{vc} (not supported)
net::Response PaiChangeUser(Call& call);            // PUT /api/v1/user (not supported)

}  // namespace cairn::api
