"""The harness and an https:// master: it verifies the master with the CA file the agent hands it
(CAIRN_MASTER_CERT_FILE), and a master it cannot verify is fatal at once, not retried."""

import os
import ssl
import subprocess
import time
import unittest

from harness_support import HarnessTestCase, counter_context

TRAIN = {"kind": "TRAIN", "batches": 2, "startBatch": 0}
EXIT = {"kind": "EXIT", "reason": "searcher done"}


def make_certificates(directory):
    """A throwaway CA and a certificate it signed for 127.0.0.1: (ca file, cert file, key file)."""
    ca_key, ca = os.path.join(directory, "ca.key"), os.path.join(directory, "ca.crt")
    key, cert = os.path.join(directory, "server.key"), os.path.join(directory, "server.crt")
    request, extensions = os.path.join(directory, "server.csr"), os.path.join(directory, "ext")
    with open(extensions, "w") as f:
        f.write("subjectAltName=IP:127.0.0.1\nextendedKeyUsage=serverAuth\n")
    new_key = ["-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes"]
    for args in (["req", "-x509", *new_key, "-keyout", ca_key, "-out", ca, "-days", "1",
                  "-subj", "/CN=harness test CA", "-addext", "basicConstraints=critical,CA:TRUE",
                  "-addext", "keyUsage=critical,keyCertSign"],
                 ["req", *new_key, "-keyout", key, "-out", request, "-subj", "/CN=fake master"],
                 ["x509", "-req", "-in", request, "-CA", ca, "-CAkey", ca_key, "-CAcreateserial",
                  "-out", cert, "-days", "1", "-extfile", extensions]):
        subprocess.run(["openssl", *args], check=True, capture_output=True)
    return ca, cert, key


class TlsTest(HarnessTestCase):
    def setUp(self):
        super().setUp()
        self.ca, cert, key = make_certificates(self.temp)
        self.server_context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        self.server_context.load_cert_chain(cert, key)

    def test_the_harness_verifies_an_https_master_with_the_agents_ca_file(self):
        master = self.start_master(files=counter_context(), workloads=[TRAIN, EXIT],
                                   tls_context=self.server_context)
        self.assertTrue(master.url.startswith("https://"), master.url)
        code, harness, _ = self.run_harness(master, extra_env={"CAIRN_MASTER_CERT_FILE": self.ca})
        self.assertExit(harness, code, 0)
        self.assertEqual(master.protocol_errors, [])
        self.assertEqual([result["kind"] for result in master.results], ["TRAIN"])

    def test_a_master_the_harness_cannot_verify_is_fatal_at_once(self):
        master = self.start_master(files=counter_context(), workloads=[TRAIN, EXIT],
                                   tls_context=self.server_context)
        started = time.monotonic()
        # No CA file: the system's CAs, which do not know the test CA. The retry budget is long,
        # so only a failure that is not retried ends within it.
        code, harness, _ = self.run_harness(
            master, extra_env={"CAIRN_MASTER_CERT_FILE": "", "CAIRN_HARNESS_RETRY_SECONDS": "600"})
        self.assertExit(harness, code, 1)
        self.assertIn("failed verification", harness.stderr)
        self.assertLess(time.monotonic() - started, 60, "not retried")
        self.assertEqual(master.results, [])


if __name__ == "__main__":
    unittest.main()
