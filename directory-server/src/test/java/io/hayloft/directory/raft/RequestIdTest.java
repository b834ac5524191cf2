package io.hayloft.directory.raft;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.hayloft.client.DirectoryClient;
import io.hayloft.client.NamespaceClient;
import io.hayloft.client.http.HttpTransport;
import io.hayloft.directory.DirectoryConfig;
import io.hayloft.directory.DirectoryServer;
import io.hayloft.directory.StoreAdmin;
import io.hayloft.directory.meta.Change;
import io.hayloft.directory.meta.LogEntry;
import io.hayloft.directory.meta.MetaStore;
import io.hayloft.format.s3.Upload;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Request ids ({@code Hayloft-Request-Id}, docs/directory-api.md "Request ids"): a change sent again
 * with the same id, after its first answer was lost, applies once and is answered with the first answer;
 * on a single directory across a restart, racing copies of one request, and in a Raft group after the
 * leader that applied it stopped (the followers recorded the id with the change). Malformed ids are a
 * 400 naming the header.
 */
class RequestIdTest {
    private static final ObjectMapper JSON = new ObjectMapper();
    private static final HttpClient RAW = HttpClient.newHttpClient();
    private static final StoreAdmin STORES = AcceptingStores.INSTANCE;

    @TempDir
    Path dir;

    private DirectoryServer single;
    private LocalGroup group;

    @AfterEach
    void close() {
        if (single != null) {
            single.close();
        }
        if (group != null) {
            group.close();
        }
    }

    private DirectoryConfig singleConfig(boolean init) {
        DirectoryConfig c = new DirectoryConfig();
        c.dataDir = dir.resolve("single").toString();
        c.port = 0;
        c.init = init;
        c.probeIntervalMillis = 100_000;
        c.adminToken = "admin";
        return c;
    }

    private static HttpResponse<String> post(String address, String path, String id, String body) throws Exception {
        HttpRequest.Builder b = HttpRequest.newBuilder(URI.create("http://" + address + path)).header("Authorization", "Bearer admin")
                .header("Content-Type", "application/json").POST(HttpRequest.BodyPublishers.ofString(body));
        if (id != null) {
            b.header(DirectoryClient.REQUEST_ID_HEADER, id);
        }
        return RAW.send(b.build(), HttpResponse.BodyHandlers.ofString());
    }

    private static String putIfAbsent(String bucket, String key, String etag) {
        return "{\"object\": {\"bucket\": \"" + bucket + "\", \"key\": \"" + key + "\", \"size\": 0, \"etag\": \"" + etag
                + "\", \"chunks\": []}, \"ifNoneMatch\": true}";
    }

    private static String upload(String bucket, String key) {
        return "{\"bucket\": \"" + bucket + "\", \"key\": \"" + key + "\"}";
    }

    @Test
    void aRepeatedChangeAppliesOnceAndIsAnsweredAsTheFirstTimeEvenAfterARestart() throws Exception {
        single = DirectoryServer.start(singleConfig(true));
        NamespaceClient ns = new NamespaceClient(new DirectoryClient(HttpTransport.create(), List.of(single.address()), "admin"));
        ns.createBucket("bkt", null).join();
        String a = single.address();

        // A conditional put (If-None-Match: *) whose answer was lost: the retry is answered 200 as the
        // first attempt was, not 412, and the object is counted once.
        String id = UUID.randomUUID().toString();
        HttpResponse<String> first = post(a, "/v1/s3/objects/bkt/put", id, putIfAbsent("bkt", "k\u00e9y", "e1"));
        assertThat(first.statusCode()).as(first.body()).isEqualTo(200);
        assertThat(first.headers().firstValue("Hayloft-Repeated")).isEmpty();
        HttpResponse<String> again = post(a, "/v1/s3/objects/bkt/put", id, putIfAbsent("bkt", "k\u00e9y", "e1"));
        assertThat(again.statusCode()).isEqualTo(200);
        assertThat(again.headers().firstValue("Hayloft-Repeated")).contains("true");
        assertThat(JSON.readTree(again.body())).isEqualTo(JSON.readTree(first.body()));
        assertThat(post(a, "/v1/s3/objects/bkt/put", UUID.randomUUID().toString(), putIfAbsent("bkt", "k\u00e9y", "e2")).statusCode())
                .as("another request with the same condition").isEqualTo(412);
        assertThat(ns.bucket("bkt").join().objects()).isEqualTo(1);

        // A new multipart upload is not idempotent by itself: the same id makes one upload, not two.
        String uid = UUID.randomUUID().toString();
        String up1 = JSON.readTree(post(a, "/v1/s3/uploads/bkt", uid, upload("bkt", "big")).body()).get("uploadId").asText();
        String up2 = JSON.readTree(post(a, "/v1/s3/uploads/bkt", uid, upload("bkt", "big")).body()).get("uploadId").asText();
        assertThat(up2).isEqualTo(up1);
        assertThat(ns.bucket("bkt").join().uploads()).isEqualTo(1);
        // Without an id every request is a new one.
        post(a, "/v1/s3/uploads/bkt", null, upload("bkt", "big"));
        assertThat(ns.bucket("bkt").join().uploads()).isEqualTo(2);

        // The record is durable: a restarted directory still answers the repeat.
        single.close();
        single = DirectoryServer.start(singleConfig(false));
        HttpResponse<String> late = post(single.address(), "/v1/s3/uploads/bkt", uid, upload("bkt", "big"));
        assertThat(late.headers().firstValue("Hayloft-Repeated")).contains("true");
        assertThat(JSON.readTree(late.body()).get("uploadId").asText()).isEqualTo(up1);
        ns = new NamespaceClient(new DirectoryClient(HttpTransport.create(), List.of(single.address()), "admin"));
        assertThat(ns.bucket("bkt").join().uploads()).isEqualTo(2);
    }

    @Test
    void racingCopiesOfOneRequestApplyOnce() throws Exception {
        single = DirectoryServer.start(singleConfig(true));
        new NamespaceClient(new DirectoryClient(HttpTransport.create(), List.of(single.address()), "admin")).createBucket("race", null).join();
        ExecutorService pool = Executors.newFixedThreadPool(16);
        try {
            for (int round = 0; round < 10; round++) {
                String id = "round-" + round;
                List<Future<HttpResponse<String>>> copies = new ArrayList<>();
                for (int i = 0; i < 16; i++) {
                    copies.add(pool.submit(() -> post(single.address(), "/v1/s3/uploads/race", id, upload("race", "k"))));
                }
                Set<String> ids = new HashSet<>();
                for (Future<HttpResponse<String>> f : copies) {
                    HttpResponse<String> r = f.get();
                    assertThat(r.statusCode()).as(r.body()).isEqualTo(200);
                    ids.add(JSON.readTree(r.body()).get("uploadId").asText());
                }
                assertThat(ids).as("round %d: every copy is answered with the one upload made", round).hasSize(1);
            }
        } finally {
            pool.shutdownNow();
        }
        // Copies of a conditional put race: the ones that waited behind the first for the bucket's latch
        // find its id recorded there and get its answer, not the 412 its own change would now earn.
        pool = Executors.newFixedThreadPool(16);
        try {
            for (int round = 0; round < 10; round++) {
                String id = "put-" + round;
                String key = "cond-" + round;
                List<Future<HttpResponse<String>>> copies = new ArrayList<>();
                for (int i = 0; i < 16; i++) {
                    copies.add(pool.submit(() -> post(single.address(), "/v1/s3/objects/race/put", id, putIfAbsent("race", key, "e"))));
                }
                Set<String> bodies = new HashSet<>();
                for (Future<HttpResponse<String>> f : copies) {
                    HttpResponse<String> r = f.get();
                    assertThat(r.statusCode()).as("round %d: %s", round, r.body()).isEqualTo(200);
                    bodies.add(JSON.readTree(r.body()).toString());
                }
                assertThat(bodies).as("round %d: one answer", round).hasSize(1);
            }
        } finally {
            pool.shutdownNow();
        }
        assertThat(single.directory().meta().namespace().bucket("race").objects()).isEqualTo(10);
        HttpResponse<String> listed = RAW.send(HttpRequest.newBuilder(URI.create("http://" + single.address() + "/v1/s3/uploads/race"))
                .header("Authorization", "Bearer admin").GET().build(), HttpResponse.BodyHandlers.ofString());
        assertThat(JSON.readTree(listed.body()).get("uploads")).hasSize(10);
    }

    @Test
    void aRetriedPendingRecordIsMadeOnceAndARecordedAnswerNeedsTheToken() throws Exception {
        single = DirectoryServer.start(singleConfig(true));
        String a = single.address();
        String body = "{\"id\": null, \"chunks\": [{\"volume\": 1, \"key\": 77, \"cookie\": 5, \"size\": 10}]}";
        HttpResponse<String> first = post(a, "/v1/s3/pending", "pend-1", body);
        HttpResponse<String> again = post(a, "/v1/s3/pending", "pend-1", body);
        assertThat(first.statusCode()).as(first.body()).isEqualTo(200);
        assertThat(JSON.readTree(again.body()).get("id")).isEqualTo(JSON.readTree(first.body()).get("id"));
        assertThat(again.headers().firstValue("Hayloft-Repeated")).contains("true");
        assertThat(single.directory().meta().namespace().pendings(null, 100)).as("one WRITING record naming the chunk, not two")
                .hasSize(1);
        // Knowing a request's id is not enough to read its answer: the route's admin check comes first.
        HttpResponse<String> stranger = RAW.send(HttpRequest.newBuilder(URI.create("http://" + a + "/v1/s3/pending"))
                .header("Content-Type", "application/json").header(DirectoryClient.REQUEST_ID_HEADER, "pend-1")
                .POST(HttpRequest.BodyPublishers.ofString(body)).build(), HttpResponse.BodyHandlers.ofString());
        assertThat(stranger.statusCode()).isEqualTo(401);
        assertThat(stranger.body()).doesNotContain(JSON.readTree(first.body()).get("id").asText());
    }

    @Test
    void aMalformedRequestIdIsABadRequestNamingTheHeader() throws Exception {
        single = DirectoryServer.start(singleConfig(true));
        String a = single.address();
        for (String bad : List.of("", "two words", "x".repeat(129), "semi;colon", "\u00e9t\u00e9", "a/b")) {
            HttpResponse<String> r = post(a, "/v1/s3/buckets/x1", bad, "{}");
            assertThat(r.statusCode()).as("id '%s'", bad).isEqualTo(400);
            JsonNode body = JSON.readTree(r.body());
            assertThat(body.toString()).contains("Hayloft-Request-Id");
        }
        HttpRequest put = HttpRequest.newBuilder(URI.create("http://" + a + "/v1/s3/buckets/longest")).header("Authorization", "Bearer admin")
                .header(DirectoryClient.REQUEST_ID_HEADER, "A-z_0.9:".repeat(16)).PUT(HttpRequest.BodyPublishers.noBody()).build();
        assertThat(RAW.send(put, HttpResponse.BodyHandlers.ofString()).statusCode()).as("128 characters").isEqualTo(200);
        assertThat(RAW.send(put, HttpResponse.BodyHandlers.ofString()).headers().firstValue("Hayloft-Repeated")).contains("true");
        assertThat(single.directory().meta().namespace().bucket("longest")).isNotNull();
    }

    @Test
    void theNewLeaderAnswersARetryOfAChangeTheOldLeaderApplied() throws Exception {
        group = LocalGroup.builder(3, () -> {
            DirectoryConfig c = new DirectoryConfig();
            c.probeIntervalMillis = 100_000;
            c.adminToken = "admin";
            c.raft = new DirectoryConfig.Raft();
            c.raft.electionTimeoutMillis = 300;
            return c;
        }, dir).storeAdmin(STORES).start();
        NamespaceClient ns = new NamespaceClient(new DirectoryClient(HttpTransport.create(), group.addresses(), "admin"));
        ns.createBucket("grp", null).join();
        int leader = group.awaitLeader(Duration.ofSeconds(30));
        String id = UUID.randomUUID().toString();
        HttpResponse<String> first = post(group.address(leader), "/v1/s3/uploads/grp", id, upload("grp", "k"));
        assertThat(first.statusCode()).as(first.body()).isEqualTo(200);

        group.stop(leader);
        int next = group.awaitLeader(Duration.ofSeconds(30));
        assertThat(next).isNotEqualTo(leader);
        HttpResponse<String> retry = post(group.address(next), "/v1/s3/uploads/grp", id, upload("grp", "k"));
        assertThat(retry.statusCode()).as(retry.body()).isEqualTo(200);
        assertThat(retry.headers().firstValue("Hayloft-Repeated")).contains("true");
        assertThat(JSON.readTree(retry.body())).isEqualTo(JSON.readTree(first.body()));
        ns = new NamespaceClient(new DirectoryClient(HttpTransport.create(), List.of(group.address(next)), "admin"));
        assertThat(ns.bucket("grp").join().uploads()).isEqualTo(1);
    }

    @Test
    void theOldestIdsAreForgottenOnEveryReplicaAlikeAndOnlyThose() throws Exception {
        try (MetaStore meta = MetaStore.open(dir.resolve("retention"), true)) {
            long n = MetaStore.RETAINED_REQUESTS + 5;
            for (long i = 1; i <= n; i++) {
                LogEntry e = new LogEntry(0, null, new Change.PutSetting("s", new byte[] {1}), new LogEntry.Request("r" + i, "{\"n\":" + i + "}"));
                LogEntry.Applied a = meta.applyEntry(i, 1, () -> e.apply(meta, 0));
                assertThat(a.outcome()).isEqualTo(LogEntry.Outcome.APPLIED);
            }
            for (long i = 1; i <= 5; i++) {
                assertThat(meta.requestAnswer("r" + i)).as("r%d, one of the 5 oldest", i).isNull();
            }
            assertThat(meta.requestAnswer("r6")).isEqualTo("{\"n\":6}");
            assertThat(meta.requestAnswer("r" + n)).isEqualTo("{\"n\":" + n + "}");
            LogEntry repeat = new LogEntry(0, null, new Change.PutSetting("s", new byte[] {2}), new LogEntry.Request("r6", "{}"));
            assertThat(meta.applyEntry(n + 1, 1, () -> repeat.apply(meta, 0)).outcome()).isEqualTo(LogEntry.Outcome.REPEATED);
            assertThat(meta.setting("s")).containsExactly(1);
        }
    }
}
