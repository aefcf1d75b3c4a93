#include "projections/template_projector.h"

#include "projections/view_reads.h"

namespace cairn::projections {

namespace {

constexpr std::string_view kTemplatePrefix = "template/";

std::string TemplateKey(const std::string& name) {
  std::string key(kTemplatePrefix);
  key += name;
  return key;
}

}  // namespace

Status TemplateProjector::Apply(const Envelope& event, ViewStore& store) const {
  switch (event.payload_case()) {
    case Envelope::kTemplateSaved:
      return store.PutMessage(TemplateKey(event.template_saved().name()), event.template_saved());
    case Envelope::kTemplateDeleted:
      return store.Delete(TemplateKey(event.template_deleted().name()));
    default:
      return Status::Ok();
  }
}

Result<std::optional<events::TemplateSaved>> ReadTemplate(ViewReader& reader,
                                                          const std::string& name) {
  return ReadView<events::TemplateSaved>(reader, TemplateKey(name));
}

Result<std::vector<events::TemplateSaved>> ReadTemplates(ViewReader& reader) {
  return ScanViews<events::TemplateSaved>(reader, kTemplatePrefix);
}

}  // namespace cairn::projections
