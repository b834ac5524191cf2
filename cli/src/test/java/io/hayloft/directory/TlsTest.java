package io.hayloft.directory;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.hayloft.serverkit.http.Tls;
import io.hayloft.store.StoreConfig;
import io.hayloft.store.StoreServer;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Every listener can serve HTTPS from a PKCS#12 keystore; a plain-HTTP client gets a clear 400 TLS_REQUIRED. */
class TlsTest {

    @TempDir
    Path dir;

    @Test
    void storeAndDirectoryServeHttps() throws Exception {
        Path keystore = dir.resolve("server.p12");
        Process keytool = new ProcessBuilder(Path.of(System.getProperty("java.home"), "bin", "keytool").toString(),
                "-genkeypair", "-alias", "hayloft", "-keyalg", "EC", "-groupname", "secp256r1", "-dname", "CN=localhost",
                "-ext", "SAN=ip:127.0.0.1,dns:localhost", "-validity", "2", "-storetype", "PKCS12",
                "-keystore", keystore.toString(), "-storepass", "changeit", "-keypass", "changeit")
                .redirectErrorStream(true).start();
        assertThat(keytool.waitFor(60, TimeUnit.SECONDS)).isTrue();
        assertThat(keytool.exitValue()).as(new String(keytool.getInputStream().readAllBytes())).isZero();

        StoreConfig sc = new StoreConfig();
        sc.dataDirs = List.of(dir.resolve("store").toString());
        sc.host = "127.0.0.1";
        sc.port = 0;
        sc.tlsKeyStore = keystore.toString();
        sc.tlsKeyStorePassword = "changeit";
        DirectoryConfig dc = new DirectoryConfig();
        dc.dataDir = dir.resolve("directory").toString();
        dc.port = 0;
        dc.init = true;
        dc.tlsKeyStore = keystore.toString();
        dc.tlsKeyStorePassword = "changeit";
        try (DirectoryServer directory = DirectoryServer.start(dc)) {
            StoreServer store = StoreServer.start(sc);
            try {
                HttpClient https = HttpClient.newBuilder().sslContext(Tls.client(keystore.toString(), "changeit"))
                        .connectTimeout(Duration.ofSeconds(10)).build();
                for (int port : new int[] {store.port(), directory.port()}) {
                    HttpResponse<String> r = https.send(HttpRequest.newBuilder(URI.create("https://127.0.0.1:" + port + "/health"))
                            .timeout(Duration.ofSeconds(10)).build(), HttpResponse.BodyHandlers.ofString());
                    assertThat(r.statusCode()).isEqualTo(200);
                    assertThat(r.body()).contains("ok");
                    HttpClient plain = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).build();
                    HttpResponse<String> refused = plain.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port
                            + "/health")).timeout(Duration.ofSeconds(5)).build(), HttpResponse.BodyHandlers.ofString());
                    assertThat(refused.statusCode()).isEqualTo(400);
                    assertThat(refused.body()).contains("\"name\":\"TLS_REQUIRED\"", "use https://host:port");
                }
            } finally {
                store.close();
            }
        }
        sc.tlsKeyStore = dir.resolve("missing.p12").toString();
        sc.port = 0;
        assertThatThrownBy(() -> StoreServer.start(sc)).isInstanceOf(IllegalArgumentException.class)
                .hasMessage("tlsKeyStore " + sc.tlsKeyStore + ": no such file");
    }
}
