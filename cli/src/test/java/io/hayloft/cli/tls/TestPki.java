package io.hayloft.cli.tls;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

/**
 * A throwaway PKI made with the JDK's {@code keytool}: a self-signed CA, the cluster certificate
 * (signed by the CA, SAN 127.0.0.1, server and client use) and a certificate the CA never signed.
 * All PKCS#12, all with the password {@link #PASSWORD}.
 */
final class TestPki {
    static final String PASSWORD = "test-pass-123";

    /** Trust store holding the CA's certificate. */
    final Path trustStore;
    /** The cluster's key and certificate chain (server and client certificate). */
    final Path clusterKeyStore;
    /** A self-signed key the CA never signed. */
    final Path strangerKeyStore;

    private TestPki(Path dir) {
        this.trustStore = dir.resolve("trust.p12");
        this.clusterKeyStore = dir.resolve("cluster.p12");
        this.strangerKeyStore = dir.resolve("stranger.p12");
    }

    static TestPki create(Path dir) throws IOException, InterruptedException {
        TestPki p = new TestPki(dir);
        Path ca = dir.resolve("ca.p12");
        Path caPem = dir.resolve("ca.pem");
        Path csr = dir.resolve("cluster.csr");
        Path pem = dir.resolve("cluster.pem");
        keytool("-genkeypair", "-alias", "ca", "-keyalg", "EC", "-groupname", "secp256r1", "-dname", "CN=hayloft-test-ca",
                "-ext", "bc:c", "-validity", "3", "-storetype", "PKCS12", "-keystore", ca, "-storepass", PASSWORD);
        keytool("-exportcert", "-rfc", "-alias", "ca", "-keystore", ca, "-storepass", PASSWORD, "-file", caPem);
        keytool("-importcert", "-noprompt", "-alias", "ca", "-file", caPem, "-storetype", "PKCS12",
                "-keystore", p.trustStore, "-storepass", PASSWORD);
        keytool("-genkeypair", "-alias", "cluster", "-keyalg", "EC", "-groupname", "secp256r1", "-dname", "CN=127.0.0.1",
                "-validity", "3", "-storetype", "PKCS12", "-keystore", p.clusterKeyStore, "-storepass", PASSWORD);
        keytool("-certreq", "-alias", "cluster", "-keystore", p.clusterKeyStore, "-storepass", PASSWORD, "-file", csr);
        keytool("-gencert", "-alias", "ca", "-keystore", ca, "-storepass", PASSWORD, "-infile", csr, "-outfile", pem, "-rfc",
                "-validity", "3", "-ext", "SAN=ip:127.0.0.1,dns:localhost", "-ext", "KU=digitalSignature",
                "-ext", "EKU=serverAuth,clientAuth");
        keytool("-importcert", "-noprompt", "-alias", "ca", "-file", caPem, "-keystore", p.clusterKeyStore, "-storepass", PASSWORD);
        keytool("-importcert", "-alias", "cluster", "-file", pem, "-keystore", p.clusterKeyStore, "-storepass", PASSWORD);
        keytool("-genkeypair", "-alias", "stranger", "-keyalg", "EC", "-groupname", "secp256r1", "-dname", "CN=127.0.0.1",
                "-ext", "SAN=ip:127.0.0.1", "-validity", "3", "-storetype", "PKCS12", "-keystore", p.strangerKeyStore,
                "-storepass", PASSWORD);
        return p;
    }

    private static void keytool(Object... args) throws IOException, InterruptedException {
        List<String> cmd = new ArrayList<>();
        cmd.add(Path.of(System.getProperty("java.home"), "bin", "keytool").toString());
        for (Object a : args) {
            cmd.add(a.toString());
        }
        Process proc = new ProcessBuilder(cmd).redirectErrorStream(true).start();
        String out = new String(proc.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        if (proc.waitFor() != 0) {
            throw new IOException("keytool failed: " + String.join(" ", cmd) + "\n" + out);
        }
    }
}
