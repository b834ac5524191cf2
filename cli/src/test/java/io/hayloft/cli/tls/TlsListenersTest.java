package io.hayloft.cli.tls;

import io.hayloft.client.store.StoreClient;
import io.hayloft.client.store.StoreException;
import io.hayloft.format.wire.PhotoId;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.catchThrowable;

import com.fasterxml.jackson.databind.JsonNode;
import io.hayloft.cache.CacheConfig;
import io.hayloft.cache.CacheServer;
import io.hayloft.client.Futures;
import io.hayloft.client.RemoteException;
import io.hayloft.client.http.HttpTransport;
import io.hayloft.directory.DirectoryConfig;
import io.hayloft.directory.DirectoryServer;
import io.hayloft.raid.Checkpoints;
import io.hayloft.raid.RaidServer;
import io.hayloft.raid.RaidServerConfig;
import io.hayloft.store.StoreConfig;
import io.hayloft.store.StoreServer;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Every listener (directory, store, cache node, raid-node) with TLS: HTTPS for clients trusting the
 * cluster CA, a clear plain-HTTP 400 for plain HTTP, and mutual TLS with {@code tlsClientAuth: require}.
 * Real servers on loopback; the certificates are made by {@code keytool} ({@link TestPki}).
 */
class TlsListenersTest {
    @TempDir
    static Path dir;
    static TestPki pki;

    @BeforeAll
    static void makeCertificates() throws Exception {
        pki = TestPki.create(dir);
    }

    @Test
    void everyListenerServesHttpsAndRefusesPlainHttpClearly() throws Exception {
        try (Servers servers = Servers.start(dir.resolve("none"), "none")) {
            HttpTransport https = HttpTransport.builder().trustStore(pki.trustStore.toString(), TestPki.PASSWORD).build();
            assertThat(https.scheme()).isEqualTo("https");
            for (Map.Entry<String, String> e : servers.addresses().entrySet()) {
                assertThat(health(https, e.getValue()).statusCode()).as(e.getKey()).isEqualTo(200);
                assertRefusesPlainHttp(e.getKey(), e.getValue());
            }
            // A client that does not trust the CA fails the handshake.
            HttpTransport untrusting = HttpTransport.builder().trustStore(pki.strangerKeyStore.toString(), TestPki.PASSWORD).build();
            RemoteException r = (RemoteException) catchThrowable(() -> health(untrusting, servers.addresses().get("store")));
            assertThat(r.kind()).isEqualTo(RemoteException.Kind.UNREACHABLE);

            // The data engine (HC5 classic, the store calls) on the same trust store: the calling
            // thread's request over TLS, a store's typed error, and the same refusal of an unknown CA.
            String store = servers.addresses().get("store");
            assertThat(dataHealth(https, store).status()).isEqualTo(200);
            StoreClient stores = new StoreClient(https);
            PhotoId missing = new PhotoId(77, 1, 0, 5);
            StoreException e = (StoreException)
                    catchThrowable(() -> stores.readNow(store, missing));
            assertThat(e.kind()).isEqualTo(RemoteException.Kind.ERROR);
            assertThat(e.httpStatus()).isEqualTo(404);
            RemoteException d = (RemoteException) catchThrowable(() -> dataHealth(untrusting, store));
            assertThat(d.kind()).isEqualTo(RemoteException.Kind.UNREACHABLE);
        }
    }

    @Test
    void mutualTlsAcceptsOnlyClientsWithATrustedCertificate() throws Exception {
        try (Servers servers = Servers.start(dir.resolve("require"), "require")) {
            HttpTransport noCertificate = HttpTransport.builder().trustStore(pki.trustStore.toString(), TestPki.PASSWORD).build();
            HttpTransport stranger = HttpTransport.builder().trustStore(pki.trustStore.toString(), TestPki.PASSWORD)
                    .keyStore(pki.strangerKeyStore.toString(), TestPki.PASSWORD).build();
            HttpTransport cluster = HttpTransport.builder().trustStore(pki.trustStore.toString(), TestPki.PASSWORD)
                    .keyStore(pki.clusterKeyStore.toString(), TestPki.PASSWORD).build();
            for (Map.Entry<String, String> e : servers.addresses().entrySet()) {
                String name = e.getKey();
                assertThat(catchThrowable(() -> health(noCertificate, e.getValue()))).as(name).isInstanceOf(RemoteException.class);
                assertThat(catchThrowable(() -> health(stranger, e.getValue()))).as(name).isInstanceOf(RemoteException.class);
                assertThat(health(cluster, e.getValue()).statusCode()).as(name).isEqualTo(200);
                assertThat(catchThrowable(() -> dataHealth(noCertificate, e.getValue()))).as(name).isInstanceOf(RemoteException.class);
                assertThat(catchThrowable(() -> dataHealth(stranger, e.getValue()))).as(name).isInstanceOf(RemoteException.class);
                assertThat(dataHealth(cluster, e.getValue()).status()).as(name).isEqualTo(200);
                assertRefusesPlainHttp(name, e.getValue());
            }
        }
    }

    @Test
    void badSettingsFailAtStartupNamingTheFileAndTheProblemNeverThePassword() {
        String missing = dir.resolve("missing.p12").toString();
        StoreConfig s = new StoreConfig();
        s.tlsKeyStore = missing;
        s.tlsKeyStorePassword = "s3cret-password";
        assertThatThrownBy(s::validate).hasMessage("tlsKeyStore " + missing + ": no such file");

        CacheConfig c = new CacheConfig();
        c.tlsKeyStore = pki.clusterKeyStore.toString();
        c.tlsKeyStorePassword = "s3cret-password";
        assertThatThrownBy(c::validate).hasMessageContaining("tlsKeyStore " + pki.clusterKeyStore)
                .hasMessageContaining("wrong password").hasMessageNotContaining("s3cret");

        RaidServerConfig r = new RaidServerConfig();
        r.tlsKeyStore = pki.clusterKeyStore.toString();
        r.tlsKeyStorePassword = TestPki.PASSWORD;
        r.tlsClientAuth = "require";
        assertThatThrownBy(r::validate).hasMessageContaining("tlsClientAuth require needs tlsTrustStore");
        r.tlsTrustStore = pki.trustStore.toString();
        r.tlsTrustStorePassword = TestPki.PASSWORD;
        r.tlsClientAuth = "sometimes";
        assertThatThrownBy(r::validate).hasMessage("tlsClientAuth must be none or require, was 'sometimes'");

        DirectoryConfig d = new DirectoryConfig();
        d.tlsKeyStore = pki.trustStore.toString(); // certificates only, no key
        d.tlsKeyStorePassword = TestPki.PASSWORD;
        assertThatThrownBy(d::validate).hasMessage("tlsKeyStore " + pki.trustStore + ": holds no private key entry");
    }

    private static HttpResponse<byte[]> health(HttpTransport t, String address) {
        return Futures.await(t.send(address, "GET /health", t.request(t.uri(address, "/health")).GET().build(),
                s -> s == 200, RemoteException::new));
    }

    /** {@code GET /health} through the transport's data engine (Apache HttpClient 5 classic), on this thread. */
    private static HttpTransport.Response dataHealth(HttpTransport t, String address) {
        return t.exchange(address, "GET /health", "GET", "/health", null, (byte[]) null, s -> s == 200, RemoteException::new);
    }

    /** Plain HTTP to the TLS port: a plain-HTTP 400 with the JSON error, then the server closes. */
    private static void assertRefusesPlainHttp(String name, String address) throws Exception {
        int colon = address.lastIndexOf(':');
        byte[] answer;
        try (Socket s = new Socket()) {
            s.connect(new InetSocketAddress(address.substring(0, colon), Integer.parseInt(address.substring(colon + 1))), 5000);
            s.setSoTimeout(10_000);
            OutputStream out = s.getOutputStream();
            out.write(("GET /health HTTP/1.1\r\nHost: " + address + "\r\n\r\n").getBytes(StandardCharsets.US_ASCII));
            out.flush();
            InputStream in = s.getInputStream();
            answer = in.readAllBytes(); // to the end: the server closes the connection
        }
        String text = new String(answer, StandardCharsets.UTF_8);
        assertThat(text).as(name).startsWith("HTTP/1.1 400 ").contains("Connection: close");
        JsonNode err = HttpTransport.JSON.readTree(text.substring(text.indexOf("\r\n\r\n") + 4)).get("error");
        assertThat(err.get("code").asInt()).as(name).isEqualTo(12);
        assertThat(err.get("name").asText()).as(name).isEqualTo("TLS_REQUIRED");
        assertThat(err.get("message").asText()).as(name).isEqualTo("this listener speaks HTTPS (TLS): use https://host:port");
    }

    /** The four kinds of listener with TLS; the raid-node calls the directory over HTTPS with its certificate. */
    private static final class Servers implements AutoCloseable {
        private DirectoryServer directory;
        private StoreServer store;
        private CacheServer cache;
        private RaidServer raid;

        static Servers start(Path dir, String clientAuth) throws Exception {
            Servers s = new Servers();
            try {
                DirectoryConfig dc = new DirectoryConfig();
                dc.dataDir = dir.resolve("directory").toString();
                dc.port = 0;
                dc.init = true;
                dc.probeIntervalMillis = 60_000;
                dc.tlsKeyStore = pki.clusterKeyStore.toString();
                dc.tlsKeyStorePassword = TestPki.PASSWORD;
                dc.tlsTrustStore = pki.trustStore.toString();
                dc.tlsTrustStorePassword = TestPki.PASSWORD;
                dc.tlsClientAuth = clientAuth;
                s.directory = DirectoryServer.start(dc);

                StoreConfig sc = new StoreConfig();
                sc.dataDirs = List.of(dir.resolve("store").toString());
                sc.host = "127.0.0.1";
                sc.port = 0;
                sc.fsync = "never";
                sc.tlsKeyStore = pki.clusterKeyStore.toString();
                sc.tlsKeyStorePassword = TestPki.PASSWORD;
                sc.tlsTrustStore = pki.trustStore.toString();
                sc.tlsTrustStorePassword = TestPki.PASSWORD;
                sc.tlsClientAuth = clientAuth;
                s.store = StoreServer.start(sc.validate());

                CacheConfig cc = new CacheConfig();
                cc.host = "127.0.0.1";
                cc.port = 0;
                cc.workerThreads = 4;
                cc.tlsKeyStore = pki.clusterKeyStore.toString();
                cc.tlsKeyStorePassword = TestPki.PASSWORD;
                cc.tlsTrustStore = pki.trustStore.toString();
                cc.tlsTrustStorePassword = TestPki.PASSWORD;
                cc.tlsClientAuth = clientAuth;
                s.cache = CacheServer.start(cc.validate());

                RaidServerConfig rc = new RaidServerConfig();
                rc.port = 0;
                rc.directory = s.directory.address();
                rc.tlsKeyStore = pki.clusterKeyStore.toString();
                rc.tlsKeyStorePassword = TestPki.PASSWORD;
                rc.tlsTrustStore = pki.trustStore.toString();
                rc.tlsTrustStorePassword = TestPki.PASSWORD;
                rc.tlsClientAuth = clientAuth;
                s.raid = RaidServer.start(rc, Checkpoints.NONE);
                return s;
            } catch (Exception | Error e) {
                s.close();
                throw e;
            }
        }

        Map<String, String> addresses() {
            Map<String, String> m = new LinkedHashMap<>();
            m.put("directory", directory.address());
            m.put("store", "127.0.0.1:" + store.port());
            m.put("cache", cache.address());
            m.put("raid-node", raid.address());
            return m;
        }

        @Override
        public void close() {
            for (AutoCloseable c : new AutoCloseable[] {raid, cache, store, directory}) {
                if (c != null) {
                    try {
                        c.close();
                    } catch (Exception e) {
                        throw new IllegalStateException("cannot close " + c, e);
                    }
                }
            }
        }
    }
}
