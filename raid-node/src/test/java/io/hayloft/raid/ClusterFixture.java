package io.hayloft.raid;

import io.hayloft.testkit.Closing;
import java.nio.file.Path;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.io.TempDir;

/**
 * The fixture of the raid-node tests that start one {@link TestCluster} per test and run a raid-node
 * on a {@link ThreadPoolRunner}: a test sets {@link #cluster} and {@link #runner} as it starts them,
 * and both are closed after it (the runner first), whether it passed or not. Not thread-safe: JUnit
 * makes one instance per test method.
 */
abstract class ClusterFixture {

    @TempDir
    Path dir;
    TestCluster cluster;
    ThreadPoolRunner runner;

    @AfterEach
    void stop() throws Exception {
        Closing.all(runner, cluster);
    }
}
