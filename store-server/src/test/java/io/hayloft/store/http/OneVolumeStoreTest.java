package io.hayloft.store.http;

import static org.assertj.core.api.Assertions.assertThat;

import io.hayloft.store.StoreServer;
import java.nio.file.Path;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.io.TempDir;

/**
 * The base of the HTTP tests that talk to one real store ({@link StoreServerTest#config}) holding
 * volume 1, created through the admin API before each test; the store is closed after it. Not
 * thread-safe: JUnit makes one instance per test method.
 */
abstract class OneVolumeStoreTest {
    @TempDir
    Path dir;

    StoreServer server;
    TestHttp http;

    @BeforeEach
    void startStore() throws Exception {
        server = StoreServer.start(StoreServerTest.config(dir));
        http = new TestHttp(server.port());
        assertThat(http.post("/admin/volumes/1", null).status()).isEqualTo(201);
    }

    @AfterEach
    void closeStore() throws Exception {
        server.close();
    }
}
