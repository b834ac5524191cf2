package io.hayloft.cli.cluster;

import io.hayloft.client.HayloftClient;
import io.hayloft.testkit.Closing;
import java.nio.file.Path;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.io.TempDir;

/**
 * The base of the tests that drive one {@link EmbeddedCluster} through one {@link HayloftClient}: a
 * test starts both with {@link #start}, and both are closed after it (the client first). Not
 * thread-safe: JUnit makes one instance per test method.
 */
public abstract class ClientOnClusterTest {
    @TempDir
    protected Path dir;

    protected EmbeddedCluster cluster;
    protected HayloftClient client;

    @AfterEach
    void closeClusterAndClient() throws Exception {
        Closing.all(client, cluster);
    }

    /** Starts the cluster {@code o} describes and a client of it. */
    protected void start(ClusterOptions o) throws Exception {
        cluster = EmbeddedCluster.start(o);
        client = cluster.newClient();
    }
}
