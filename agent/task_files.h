// The files a task was submitted with (det cmd run -c DIR), written into its work directory
// before it starts, as the master hands them over ({"files":[{"path","content","mode"}]},
// content in base64).
#pragma once

#include <string>

#include "base/status.h"

namespace cairn::agent {

// Writes every file under `work_dir`, creating directories as needed. A path that is absolute or
// climbs out ("..") is refused (InvalidArgument) before anything is written, whatever the master
// sent; a malformed document is InvalidArgument, a failed write IOError.
Status WriteTaskFiles(const std::string& files_json, const std::string& work_dir);

}  // namespace cairn::agent
