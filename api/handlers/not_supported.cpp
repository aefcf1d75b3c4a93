#include "api/handlers/not_supported.h"

namespace cairn::api {

namespace {

http::Response FeatureNotSupported(const std::string& feature) {
  return Error(Status::NotSupported(feature + " not supported by this Cairn master yet"));
}

}  // namespace

http::Response ModelPathNotSupported(Call&) {
  return FeatureNotSupported("model version metrics and this model registry path are");
}
http::Response ShellsNotSupported(Call& call) { return ExperimentPathNotSupported(call); }
http::Response NotebooksNotSupported(Call& call) { return ExperimentPathNotSupported(call); }
http::Response TensorboardsNotSupported(Call& call) { return ExperimentPathNotSupported(call); }
http::Response WorkspacesNotSupported(Call&) {
  return FeatureNotSupported(
      "namespace bindings, resource quotas, notes and the other workspace and project settings "
      "beyond names, archiving and default pools are");
}
http::Response PoolBindingsNotSupported(Call&) {
  return FeatureNotSupported("resource-pool operations other than workspace-bindings are");
}
http::Response ExperimentActionNotSupported(Call& call) {
  return Error(Status::NotSupported("experiments/{id}/" + call.Param("what") +
                                    " is not supported by this Cairn master yet"));
}

http::Response ExperimentPathNotSupported(Call& call) {
  return Error(Status::NotSupported(call.request().method + " " + call.request().path +
                                    " is not supported by this Cairn master yet"));
}

}  // namespace cairn::api
