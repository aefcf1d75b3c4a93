#include "net/xml_scan.h"

#include <cstdint>

namespace cairn::net {

namespace {

// Appends code point `cp` as UTF-8; false for one XML may not carry.
bool AppendUtf8(uint32_t cp, std::string& out) {
  if (cp == 0 || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) return false;
  if (cp < 0x80) {
    out += static_cast<char>(cp);
  } else if (cp < 0x800) {
    out += static_cast<char>(0xC0 | (cp >> 6));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  } else if (cp < 0x10000) {
    out += static_cast<char>(0xE0 | (cp >> 12));
    out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  } else {
    out += static_cast<char>(0xF0 | (cp >> 18));
    out += static_cast<char>(0x80 | ((cp >> 12) & 0x3F));
    out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  }
  return true;
}

std::optional<std::string> DecodeEntities(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (size_t i = 0; i < text.size(); ++i) {
    if (text[i] != '&') {
      out += text[i];
      continue;
    }
    const size_t end = text.find(';', i);
    if (end == std::string_view::npos) return std::nullopt;
    const std::string_view name = text.substr(i + 1, end - i - 1);
    if (name == "amp") {
      out += '&';
    } else if (name == "lt") {
      out += '<';
    } else if (name == "gt") {
      out += '>';
    } else if (name == "quot") {
      out += '"';
    } else if (name == "apos") {
      out += '\'';
    } else if (name.size() >= 2 && name[0] == '#') {
      const bool hex = name[1] == 'x' || name[1] == 'X';
      const std::string_view digits = name.substr(hex ? 2 : 1);
      if (digits.empty() || digits.size() > 8) return std::nullopt;
      uint32_t cp = 0;
      for (char c : digits) {
        int value = -1;
        if (c >= '0' && c <= '9') value = c - '0';
        if (hex && c >= 'a' && c <= 'f') value = c - 'a' + 10;
        if (hex && c >= 'A' && c <= 'F') value = c - 'A' + 10;
        if (value < 0) return std::nullopt;
        cp = cp * (hex ? 16 : 10) + static_cast<uint32_t>(value);
      }
      if (!AppendUtf8(cp, out)) return std::nullopt;
    } else {
      return std::nullopt;
    }
    i = end;
  }
  return out;
}

}  // namespace

std::vector<std::string_view> XmlElements(std::string_view xml, std::string_view tag) {
  std::vector<std::string_view> found;
  const std::string open = "<" + std::string(tag);
  const std::string close = "</" + std::string(tag) + ">";
  size_t at = 0;
  while ((at = xml.find(open, at)) != std::string_view::npos) {
    const size_t after_name = at + open.size();
    if (after_name >= xml.size()) break;
    const char next = xml[after_name];
    if (next != '>' && next != ' ' && next != '/') {  // <KeyCount> is not <Key>
      at = after_name;
      continue;
    }
    const size_t tag_end = xml.find('>', after_name);
    if (tag_end == std::string_view::npos) break;
    if (xml[tag_end - 1] == '/') {  // <tag/>: empty
      found.push_back(xml.substr(tag_end + 1, 0));
      at = tag_end + 1;
      continue;
    }
    const size_t body_end = xml.find(close, tag_end + 1);
    if (body_end == std::string_view::npos) break;
    found.push_back(xml.substr(tag_end + 1, body_end - tag_end - 1));
    at = body_end + close.size();
  }
  return found;
}

std::optional<std::string> XmlText(std::string_view xml, std::string_view tag) {
  auto elements = XmlElements(xml, tag);
  if (elements.empty()) return std::nullopt;
  return DecodeEntities(elements.front());
}

}  // namespace cairn::net
