// The registry projection: models and their versions. "model/<id, 10 digits>" ->
// views::ModelView, "model-name/<name>" -> the model's id (decimal), and
// "version/<model id, 10 digits>/<version, 10 digits>" -> views::ModelVersionView. A deleted
// model takes its versions with it.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "projections/projector.h"
#include "views.pb.h"

namespace cairn::projections {

inline const std::string kRegistryProjector = "registry";

class RegistryProjector : public Projector {
 public:
  const std::string& name() const override { return kRegistryProjector; }
  Status Apply(const Envelope& event, ViewStore& store) const override;
};

Result<std::optional<views::ModelView>> ReadModel(ViewReader& reader, int32_t model_id);
Result<std::optional<views::ModelView>> ReadModelByName(ViewReader& reader,
                                                        const std::string& name);
// Every model, by id.
Result<std::vector<views::ModelView>> ReadModels(ViewReader& reader);
// The model's versions, by version number.
Result<std::vector<views::ModelVersionView>> ReadModelVersions(ViewReader& reader,
                                                               int32_t model_id);
Result<std::optional<views::ModelVersionView>> ReadModelVersion(ViewReader& reader,
                                                                int32_t model_id, int32_t version);

}  // namespace cairn::projections
