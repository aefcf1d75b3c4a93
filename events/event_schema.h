// The event schema as consumers outside Cairn decode it: the FileDescriptorSet of
// events/proto/events.proto (protoc --include_imports --descriptor_set_out), compiled in at build
// time so that `cairn replay schema` needs no file at run time. The same bytes are installed as
// share/cairn/events.desc; docs/events.md says how to decode records with them.
#pragma once

#include <string_view>

namespace cairn {

// The serialized google.protobuf.FileDescriptorSet; static storage, valid for the whole run.
std::string_view EventSchemaDescriptorSet();

}  // namespace cairn
