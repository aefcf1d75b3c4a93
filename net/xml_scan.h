// Just enough XML for the object stores' listings (S3's ListObjectsV2, Azure's List Blobs): the
// bodies of the elements named `tag`, and an element's text with the five entities and numeric
// references decoded. Not a parser: no attributes on the elements read, no CDATA, no nesting of
// an element inside one of the same name. Pure functions.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace cairn::net {

// The contents of each <tag>...</tag> (or <tag attr="...">...</tag>) in `xml`, in order.
std::vector<std::string_view> XmlElements(std::string_view xml, std::string_view tag);

// The decoded text of the first <tag> in `xml`; nullopt when there is none or its text holds a
// malformed entity.
std::optional<std::string> XmlText(std::string_view xml, std::string_view tag);

}  // namespace cairn::net
