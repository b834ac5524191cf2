package io.hayloft.cache;

import java.nio.file.Path;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.io.TempDir;

/**
 * The base of the tests that run against one {@link CacheFixture} (one real store, the cache servers
 * and proxies a test starts): a fresh fixture in a fresh directory before each test, closed after it.
 * Not thread-safe: JUnit makes one instance per test method.
 */
abstract class CacheFixtureTest {

    @TempDir
    Path dir;
    CacheFixture f;

    @BeforeEach
    void startFixture() throws Exception {
        f = new CacheFixture(dir);
    }

    @AfterEach
    void closeFixture() throws Exception {
        f.close();
    }
}
