#include "net/object_store.h"

#include "net/xml_scan.h"

namespace cairn::net {

Status ObjectStoreError(const std::string& what, int http_status, const std::string& body) {
  std::string detail = XmlText(body, "Code").value_or("");
  if (auto message = XmlText(body, "Message")) {
    detail += ": " + message->substr(0, message->find('\n'));
  }
  if (detail.empty()) detail = "HTTP " + std::to_string(http_status);
  const std::string text = what + " failed: " + detail;
  if (http_status == 404) return Status::NotFound(text);
  if (http_status == 403 || http_status == 401) return Status::PermissionDenied(text);
  if (http_status >= 500) return Status::Unavailable(text);
  return Status::FailedPrecondition(text);
}

std::string ByteRange(uint64_t offset, uint64_t length) {
  return "bytes=" + std::to_string(offset) + "-" + std::to_string(offset + length - 1);
}

Result<std::string> RangedReadAnswer(const std::string& what, ClientResponse response,
                                     uint64_t offset, uint64_t length) {
  if (response.status == 416) return std::string();
  if (response.status == 206) return std::move(response.body);
  if (response.status != 200) return ObjectStoreError(what, response.status, response.body);
  if (offset >= response.body.size()) return std::string();
  return response.body.substr(offset, length);
}

ClientOptions ObjectStoreClientOptions(bool tls, const std::string& ca_file) {
  ClientOptions options;
  options.tls = tls;
  options.ca_file = ca_file;
  options.max_response_bytes = kMaxObjectStoreAnswerBytes;
  return options;
}

}  // namespace cairn::net
