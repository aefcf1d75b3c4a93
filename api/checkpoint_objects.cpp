#include "api/checkpoint_objects.h"

#include "net/azure_blob_client.h"
#include "net/s3_client.h"

namespace cairn {

Result<CheckpointObjects> OpenCheckpointObjects(const experiments::CheckpointStorageConfig& storage,
                                                const SecretSealer& sealer) {
  CheckpointObjects objects;
  if (storage.type == "s3") {
    net::S3Credentials credentials;
    if (storage.access_key && storage.secret_key) {
      CAIRN_ASSIGN_OR_RETURN(std::string access_key, sealer.UnsealText(*storage.access_key));
      CAIRN_ASSIGN_OR_RETURN(std::string secret_key, sealer.UnsealText(*storage.secret_key));
      credentials = {std::move(access_key), std::move(secret_key), ""};
    } else {
      CAIRN_ASSIGN_OR_RETURN(credentials, net::S3CredentialsFromEnvironment());
    }
    net::S3Location location;
    location.bucket = storage.bucket;
    location.endpoint_url = storage.endpoint_url.value_or("");
    // boto3's order: AWS_REGION, then AWS_DEFAULT_REGION.
    for (const char* name : {"AWS_REGION", "AWS_DEFAULT_REGION"}) {
      const char* region = std::getenv(name);
      if (region != nullptr && *region != '\0') {
        location.region = region;
        break;
      }
    }
    CAIRN_ASSIGN_OR_RETURN(objects.store, net::OpenS3(location, credentials));
    objects.key_prefix = storage.prefix.empty() ? "" : storage.prefix + "/";
    return objects;
  }
  if (storage.type == "azure") {
    // The config parser requires a connection string for Azure.
    CAIRN_ASSIGN_OR_RETURN(std::string connection_string,
                           sealer.UnsealText(storage.connection_string.value_or("")));
    CAIRN_ASSIGN_OR_RETURN(net::AzureAccount account,
                           net::ParseAzureConnectionString(connection_string));
    CAIRN_ASSIGN_OR_RETURN(objects.store, net::OpenAzureBlob(account, storage.container));
    return objects;
  }
  return Status::InvalidArgument("checkpoint storage of type " + storage.type +
                                 " is not an object store");
}

std::string CheckpointKeyPrefix(const CheckpointObjects& objects, const std::string& uuid) {
  return objects.key_prefix + uuid + "/";
}

}  // namespace cairn
