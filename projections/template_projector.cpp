#include "projections/template_projector.h"

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
  events::TemplateSaved saved;
  CAIRN_ASSIGN_OR_RETURN(bool found, GetMessage(reader, TemplateKey(name), &saved));
  if (!found) return std::optional<events::TemplateSaved>();
  return std::optional<events::TemplateSaved>(std::move(saved));
}

Result<std::vector<events::TemplateSaved>> ReadTemplates(ViewReader& reader) {
  std::vector<events::TemplateSaved> templates;
  Status parse_error;
  CAIRN_RETURN_IF_ERROR(
      reader.Scan(kTemplatePrefix, [&](std::string_view key, std::string_view value) {
        parse_error = ParseView(value, key, &templates.emplace_back());
        return parse_error.ok();
      }));
  CAIRN_RETURN_IF_ERROR(parse_error);
  return templates;
}

}  // namespace cairn::projections
