package io.hayloft.bench.failover;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.hayloft.testkit.Await;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;

/**
 * Shared setup of the failover tests: a group of three replicas and three stores as processes run from
 * the test class path ({@link GroupProcesses#classPathLauncher}, their classes shared from an archive made
 * once), a write load, and the checks every test ends with. Stateless.
 */
final class FailoverTesting {
    /** Deadline of what a test waits for: long, as a JVM started on a busy 2-core machine may need a minute. */
    static final Duration LONG = Duration.ofSeconds(120);

    /** Where the archive of the server processes' classes is made once ({@link SharedClasses}): the module's build directory. */
    static final Path SHARED_CLASSES = Path.of(System.getProperty("basedir", ""), "target", "cds");

    private FailoverTesting() {
    }

    /** Options of a test group: election timeout 500 ms (the default), small heaps, commits time out after 2 s. */
    static GroupProcesses.Options options(Path dir, boolean simulated) {
        GroupProcesses.Options o = new GroupProcesses.Options();
        o.dir = dir;
        o.simulated = simulated;
        o.launcher = GroupProcesses.classPathLauncher(GroupProcesses.smallJvm(), SHARED_CLASSES);
        o.commitTimeoutMillis = 2000;
        // No health-checker verdicts: once the stores stop, the replicated state holds still and can be compared.
        o.probeIntervalMillis = 3_600_000;
        return o;
    }

    /** A write load of {@code writers} threads with the client's default backoff. */
    static WriteLoad load(GroupProcesses g, int writers) {
        return new WriteLoad(g.directoryAddresses(), writers, 5, new Duration[] {Duration.ofMillis(50), Duration.ofSeconds(1)});
    }

    /** Waits until the probe has {@code n} more puts acknowledged (writes go through). */
    static void awaitProbeAcks(WriteLoad load, int n, String what) throws InterruptedException {
        long before = load.probeAcks();
        Await.until(what + " (last failure: " + load.lastFailure() + ")", LONG, () -> load.probeAcks() >= before + n);
    }

    /** Stops the load, reads every acknowledged photo back and checks the keys and raid leases. */
    static WriteLoad.Verdict stopAndVerify(WriteLoad load) throws InterruptedException {
        load.stop();
        WriteLoad.Verdict v = load.verify();
        assertThat(v.problems()).as("violations").isEmpty();
        assertThat(v.acknowledged()).as("photos acknowledged").isPositive();
        assertThat(v.readBack()).as("acknowledged photos read back byte-exact").isEqualTo(v.acknowledged());
        assertThat(v.leaseRanges()).as("leases the collector got").isPositive();
        return v;
    }

    /**
     * The committed part of an answer's records: without what the leader keeps in memory from the
     * heartbeats it received (a store's {@code freeBytes} and {@code lastHeartbeatMillis}, a volume's
     * {@code sizeBytes}: soft state, docs/architecture.md "The write pipeline"), which each replica
     * has from its own term as leader.
     */
    static JsonNode committed(JsonNode records) {
        if (records == null || !records.isArray()) {
            return records;
        }
        ArrayNode out = records.deepCopy();
        for (JsonNode r : out) {
            if (r instanceof ObjectNode o) {
                o.remove(List.of("freeBytes", "lastHeartbeatMillis", "sizeBytes"));
            }
        }
        return out;
    }

    /** With the stores stopped, every replica (each made leader in turn) answers the same stores, volumes, stripes and reclaims. */
    static void assertSameStateEverywhere(GroupProcesses g) throws Exception {
        g.killStores();
        Map<String, Map<String, JsonNode>> states = g.statesOfEveryReplica(LONG);
        Map<String, JsonNode> first = states.values().iterator().next();
        assertThat(first.get("/v1/stores")).as("stores").hasSize(g.stores().size());
        assertThat(first.get("/v1/volumes").size()).as("volumes").isPositive();
        for (Map.Entry<String, Map<String, JsonNode>> e : states.entrySet()) {
            for (String path : GroupProcesses.STATE_PATHS) {
                assertThat(committed(e.getValue().get(path))).as("%s of replica %s, entry by entry", path, e.getKey())
                        .isEqualTo(committed(first.get(path)));
            }
        }
    }
}
