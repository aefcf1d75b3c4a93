// The templates projection: Determined's configuration templates by name, keyed
// "template/<name>" -> events::TemplateSaved (the latest save; a delete removes it).
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "projections/projector.h"

namespace cairn::projections {

inline const std::string kTemplatesProjector = "templates";

class TemplateProjector : public Projector {
 public:
  const std::string& name() const override { return kTemplatesProjector; }
  Status Apply(const Envelope& event, ViewStore& store) const override;
};

Result<std::optional<events::TemplateSaved>> ReadTemplate(ViewReader& reader,
                                                          const std::string& name);
// Every template, by name.
Result<std::vector<events::TemplateSaved>> ReadTemplates(ViewReader& reader);

}  // namespace cairn::projections
