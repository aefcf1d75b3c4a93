# cmake -DINPUT=events.desc -DOUTPUT=file.cpp -P embed_descriptor_set.cmake: writes the bytes of
# INPUT as the definition of cairn::EventSchemaDescriptorSet() (events/event_schema.h).
file(READ ${INPUT} content HEX)
string(REGEX REPLACE "([0-9a-f][0-9a-f])" "0x\\1," bytes "${content}")
string(REGEX REPLACE "(0x..,0x..,0x..,0x..,0x..,0x..,0x..,0x..,0x..,0x..,0x..,0x..,)" "\\1\n"
       bytes "${bytes}")
file(WRITE ${OUTPUT}.tmp
     "// Generated from events.desc by events/proto/embed_descriptor_set.cmake. Do not edit.\n"
     "#include \"events/event_schema.h\"\n\n"
     "namespace cairn {\nnamespace {\n\nconst unsigned char kDescriptorSet[] = {\n${bytes}};\n\n"
     "}  // namespace\n\n"
     "std::string_view EventSchemaDescriptorSet() {\n"
     "  return {reinterpret_cast<const char*>(kDescriptorSet), sizeof kDescriptorSet};\n}\n\n"
     "}  // namespace cairn\n")
# Replaced whole, so that an interrupted run never leaves half a file that looks built.
file(RENAME ${OUTPUT}.tmp ${OUTPUT})
