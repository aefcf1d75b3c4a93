#include "tests/support/test_certificates.h"

#include <fstream>
#include <vector>

#include "tests/support/test_support.h"

namespace cairn::testing {
namespace {

Status RunOpenssl(const std::vector<std::string>& args) {
  std::vector<std::string> argv = {"openssl"};
  argv.insert(argv.end(), args.begin(), args.end());
  FinishedProcess run = RunToEnd(argv, std::chrono::seconds(60));
  if (run.exit_code == 0) return Status::Ok();
  return Status::Unavailable("openssl " + args[0] + " failed (exit " +
                             std::to_string(run.exit_code) + "):\n" + run.Text());
}

}  // namespace

Result<TestCertificates> MakeTestCertificates(const std::string& directory,
                                              const std::string& subject_alt_names) {
  TestCertificates made{directory + "/ca.crt", directory + "/server.crt",
                        directory + "/server.key"};
  const std::string ca_key = directory + "/ca.key";
  const std::string request = directory + "/server.csr";
  const std::string extensions = directory + "/server.ext";
  // P-256 keys: as good as RSA here and made in milliseconds.
  const std::vector<std::string> new_key = {"-newkey", "ec", "-pkeyopt",
                                            "ec_paramgen_curve:prime256v1", "-nodes"};
  std::vector<std::string> ca = {"req", "-x509"};
  ca.insert(ca.end(), new_key.begin(), new_key.end());
  ca.insert(ca.end(), {"-keyout", ca_key, "-out", made.ca_file, "-days", "1", "-subj",
                       "/CN=Cairn test CA", "-addext", "basicConstraints=critical,CA:TRUE",
                       "-addext", "keyUsage=critical,keyCertSign,cRLSign"});
  CAIRN_RETURN_IF_ERROR(RunOpenssl(ca));
  std::vector<std::string> server = {"req"};
  server.insert(server.end(), new_key.begin(), new_key.end());
  server.insert(server.end(),
                {"-keyout", made.key_file, "-out", request, "-subj", "/CN=cairn-test-server"});
  CAIRN_RETURN_IF_ERROR(RunOpenssl(server));
  {
    std::ofstream out(extensions);
    out << "subjectAltName=" << subject_alt_names << "\n"
        << "basicConstraints=CA:FALSE\n"
        << "extendedKeyUsage=serverAuth\n";
    if (!out) return Status::IOError("cannot write " + extensions);
  }
  CAIRN_RETURN_IF_ERROR(RunOpenssl({"x509", "-req", "-in", request, "-CA", made.ca_file, "-CAkey",
                                    ca_key, "-CAcreateserial", "-out", made.cert_file, "-days", "1",
                                    "-extfile", extensions}));
  return made;
}

}  // namespace cairn::testing
