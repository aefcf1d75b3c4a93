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

ClientOptions ObjectStoreClientOptions(bool tls, const std::string& ca_file) {
  ClientOptions options;
  options.tls = tls;
  options.ca_file = ca_file;
  options.max_response_bytes = kMaxObjectStoreAnswerBytes;
  return options;
}

}  // namespace cairn::net
