// Notebooks, shells and TensorBoards (Determined's /api/v1/notebooks|shells|tensorboards), and
// the master's proxy to their services at /proxy/{taskId}/: the only way in. The agent starts
// Jupyter, sshd or TensorBoard and reports when it answers (TaskReady); the proxy passes HTTP and
// WebSocket through to it (a shell's WebSocket is unwrapped into sshd's TCP stream, as
// Determined's CLI tunnels SSH), for the task's owner, its workspace's admins and cluster admins.
// Per-task secrets (Jupyter's token, the shell's key pair) are derived from the agent token by
// the master and the agent alike (base/task_secrets.h), never stored or logged.
#pragma once

#include <string>

#include "api/call.h"
#include "views.pb.h"

namespace cairn::api {

net::Response LaunchNotebook(Call& call);     // POST /api/v1/notebooks
net::Response LaunchShell(Call& call);        // POST /api/v1/shells
net::Response LaunchTensorboard(Call& call);  // POST /api/v1/tensorboards
// GET /api/v1/{notebooks,shells,tensorboards}[?users=&workspaceId=]
net::Response ListNotebooks(Call& call);
net::Response ListShells(Call& call);
net::Response ListTensorboards(Call& call);
// GET /api/v1/{notebooks,shells,tensorboards}/{id}; a shell's private key only for its owner.
net::Response GetNotebook(Call& call);
net::Response GetShell(Call& call);
net::Response GetTensorboard(Call& call);
// POST /api/v1/{notebooks,shells,tensorboards}/{id}/kill
net::Response KillNotebook(Call& call);
net::Response KillShell(Call& call);
net::Response KillTensorboard(Call& call);

// Any method on /proxy/{id}/...: the task's service, for its owner, its workspace's admins and
// cluster admins (a bearer token, or the cookie POST .../proxy-cookie set). 404 for a task that
// is not an interactive one the caller may see, 503 while it is not ready, 502 when the agent's
// service cannot be reached. Without any credential, a WebSocket reaches a ready shell's sshd
// (whose only way in is the shell's key, which only its owner can read), as Determined's
// `det shell open` tunnels; anything else gets 401.
net::Response ProxyToTask(Call& call);
// POST /api/v1/tasks/{id}/proxy-cookie: sets the cookie a browser reaches /proxy/{id}/ with
// (HttpOnly, SameSite=Strict, the proxy's path only); the same people as the proxy.
net::Response SetProxyCookie(Call& call);
// GET /det/interactive/{rest...}: the page Determined's CLI opens for a notebook or TensorBoard;
// it logs in if needed, sets the proxy cookie and goes to the service.
net::Response InteractivePage(Call& call);

// The request the upstream service gets (pure; exposed for tests): the same method, target and
// headers, without hop-by-hop headers and without the caller's Cairn credentials (the
// Authorization bearer token and the proxy cookie), with `authorization` (e.g. Jupyter's
// "token ...") when not empty, "Connection: close" unless it is a WebSocket upgrade, the body's
// Content-Length, and X-Forwarded-For/-Host.
std::string UpstreamRequest(const net::Request& request, const std::string& authorization);

}  // namespace cairn::api
