#include "commands/templates/template_state.h"

namespace cairn::commands {

bool ApplyTemplateEvent(DecisionState& state, const events::Envelope& event) {
  switch (event.payload_case()) {
    case events::Envelope::kTemplateSaved:
      state.templates[event.template_saved().name()] = event.template_saved();
      return true;
    case events::Envelope::kTemplateDeleted:
      state.templates.erase(event.template_deleted().name());
      return true;
    default:
      return false;
  }
}

}  // namespace cairn::commands
