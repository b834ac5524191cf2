package io.hayloft.directory.raft;

import static org.assertj.core.api.Assertions.assertThat;

import io.hayloft.client.DirectoryClient;
import io.hayloft.client.DirectoryException;
import io.hayloft.client.NamespaceClient;
import io.hayloft.client.NamespaceClient.Condition;
import io.hayloft.client.http.HttpTransport;
import io.hayloft.directory.DirectoryConfig;
import io.hayloft.directory.StoreAdmin;
import io.hayloft.format.s3.Bucket;
import io.hayloft.format.s3.Chunk;
import io.hayloft.format.s3.ObjectRecord;
import io.hayloft.format.s3.Pending;
import io.hayloft.format.s3.Replaced;
import io.hayloft.format.s3.Upload;
import io.hayloft.testkit.Await;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletionException;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The S3 namespace in a group of three directory replicas (in-process, real Raft and RocksDB): a
 * follower refuses namespace calls with 421, every replica applies the leader's namespace changes to
 * the same records, and after the leader stops the new leader answers with everything the old one
 * acknowledged, conditions included.
 */
class NamespaceRaftTest {
    private LocalGroup group;

    @TempDir
    Path dir;

    private static final StoreAdmin STORES = AcceptingStores.INSTANCE;

    @AfterEach
    void close() {
        if (group != null) {
            group.close();
        }
    }

    private int leader() throws InterruptedException {
        return group.awaitLeader(Duration.ofSeconds(30));
    }

    private static String errorOf(Runnable call) {
        try {
            call.run();
        } catch (CompletionException e) {
            return ((DirectoryException) e.getCause()).errorName();
        }
        throw new AssertionError("no error");
    }

    @Test
    void theNewLeaderHasTheNamespaceTheOldOneAcknowledged() throws Exception {
        group = LocalGroup.builder(3, () -> {
            DirectoryConfig c = new DirectoryConfig();
            c.probeIntervalMillis = 100_000;
            c.adminToken = "admin";
            c.raft = new DirectoryConfig.Raft();
            c.raft.electionTimeoutMillis = 300;
            return c;
        }, dir).storeAdmin(STORES).start();
        int leader = leader();
        int follower = (leader + 1) % 3;
        HttpResponse<String> refused = HttpClient.newHttpClient().send(HttpRequest.newBuilder(
                URI.create("http://" + group.address(follower) + "/v1/s3/buckets")).header("Authorization", "Bearer admin").GET().build(),
                HttpResponse.BodyHandlers.ofString());
        assertThat(refused.statusCode()).isEqualTo(421);

                NamespaceClient ns = new NamespaceClient(new DirectoryClient(HttpTransport.create(), group.addresses(), "admin"));
        ns.createBucket("group", "here").join();
        Chunk chunk = new Chunk(3, 99, 5, 1000);
        String pending = ns.pend(null, List.of(chunk)).join();
        ObjectRecord o = new ObjectRecord("group", "k/1", 1000, "e1", List.of(chunk), null, null, null, null, null, null, 0);
        Replaced put = ns.putObject(o, pending, new Condition(null, true)).join();
        Upload u = ns.createUpload(new Upload("group", "k/2", null, 0, null, null, null, null, null)).join();
        String writing = ns.pend(null, List.of(new Chunk(3, 100, 5, 7))).join();
        Chunk lost = new Chunk(3, 101, 5, 7);
        String doomed = ns.pend(null, List.of(lost)).join();
        ns.doom(doomed).join();

        Await.until("every replica holds the same namespace", () -> Stream.of(0, 1, 2).map(i -> group.server(i).directory().meta()
                .digest().entrySet().stream().filter(e -> e.getKey().startsWith("s3-")).toList()).distinct().count() == 1);
        assertThat(group.server(follower).directory().meta().namespace().object("group", "k/1")).isEqualTo(put.object());

        group.stop(leader);
        int next = leader();
        assertThat(next).isNotEqualTo(leader);

        assertThat(ns.object("group", "k/1").join()).isEqualTo(put.object());
        assertThat(ns.bucket("group").join()).extracting(Bucket::region, Bucket::objects, Bucket::bytes, Bucket::uploads)
                .containsExactly("here", 1L, 1000L, 1L);
        assertThat(ns.upload("group", "k/2", u.uploadId()).join()).isEqualTo(u);
        assertThat(ns.pendings(null, 10).join()).extracting(Pending::id, Pending::state).contains(
                org.assertj.core.groups.Tuple.tuple(writing, Pending.WRITING)).hasSize(2);
        assertThat(errorOf(() -> ns.putObject(o, null, new Condition(null, true)).join())).isEqualTo("PRECONDITION_FAILED");
        // A repeat of the acknowledged put (its answer lost in the failover) is its success again; a doomed record fails.
        assertThat(ns.putObject(o, pending, Condition.NONE).join()).isEqualTo(new Replaced(put.object(), null));
        assertThat(errorOf(() -> ns.putObject(new ObjectRecord("group", "k/3", 7, "e3", List.of(lost), null, null, null, null, null,
                null, 0), doomed, Condition.NONE).join())).isEqualTo("PENDING_GONE");
        Replaced over = ns.putObject(new ObjectRecord("group", "k/1", 0, "e2", null, null, null, null, null, null, null, 0), null,
                new Condition("e1", false)).join();
        assertThat(over.doomed()).isNotNull();
        assertThat(ns.list("group", null, "/", null, 10).join().commonPrefixes()).containsExactly("k/");
    }
}
