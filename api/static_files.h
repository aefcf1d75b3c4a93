// The web UI's files (web/) as the master serves them: which file a request path names, refusing
// any path that could leave the UI's folder, and the content type each kind of file is sent with.
// Only the kinds of file the UI is made of are served; anything else is not found.
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "base/status.h"

namespace cairn::api {

// The content type of a file the UI may serve, by its extension (".js" -> "text/javascript;
// charset=utf-8"); nullopt for any other kind of file.
std::optional<std::string> StaticContentType(std::string_view path);

// The file under `root` that the relative path `relative` ("app.js", "views/queue.js") names.
// Refused (NotFound, so that a probe learns nothing): an empty path or segment, "." or "..",
// a backslash or NUL, a hidden file (a segment starting with '.'), a kind of file the UI does not
// have, and anything that is not a regular file inside `root` once links are followed.
Result<std::string> ResolveStaticFile(const std::string& root, std::string_view relative);

// A validator for a file's current content (its size and modification time), quoted for ETag.
std::string StaticFileTag(const std::string& path);

}  // namespace cairn::api
