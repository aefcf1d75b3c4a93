#include "api/handlers/not_supported.h"

namespace cairn::api {

namespace {

net::Response FeatureNotSupported(const std::string& feature) {
  return Error(Status::NotSupported(feature + " not supported by this Cairn master yet"));
}

}  // namespace

net::Response ModelPathNotSupported(Call&) {
  return FeatureNotSupported("model version metrics and this model registry path are");
}
net::Response ShellsNotSupported(Call& call) { return ExperimentPathNotSupported(call); }
net::Response NotebooksNotSupported(Call& call) { return ExperimentPathNotSupported(call); }
net::Response TensorboardsNotSupported(Call& call) { return ExperimentPathNotSupported(call); }
net::Response WorkspacesNotSupported(Call&) {
  return FeatureNotSupported(
      "namespace bindings, resource quotas, notes and the other workspace and project settings "
      "beyond names, archiving and default pools are");
}
net::Response PoolBindingsNotSupported(Call&) {
  return FeatureNotSupported("resource-pool operations other than workspace-bindings are");
}
net::Response ExperimentActionNotSupported(Call& call) {
  return Error(Status::NotSupported("experiments/{id}/" + call.Param("what") +
                                    " is not supported by this Cairn master yet"));
}

net::Response ExperimentPathNotSupported(Call& call) {
  return Error(Status::NotSupported(call.request().method + " " + call.request().path +
                                    " is not supported by this Cairn master yet"));
}

}  // namespace cairn::api
