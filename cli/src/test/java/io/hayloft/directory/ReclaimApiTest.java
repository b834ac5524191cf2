package io.hayloft.directory;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import io.hayloft.common.wire.StripeMap;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * The reclaim endpoints of a real directory server (with real stores for volume creation), over HTTP:
 * delete counters on erasure-coded volumes, dead-keys, the pending plan, the compare-and-set swap,
 * rollback, and a 4xx JSON error for each kind of bad input. No raid-node: the test plays its part.
 */
class ReclaimApiTest extends DirectoryOverHttp {
    private int errorCode(String method, String path, String body, int status) throws Exception {
        JsonNode e = send(method, path, body, status, ADMIN).get("error");
        assertThat(e.get("message").asText()).isNotBlank();
        return e.get("code").asInt();
    }

    private static StripeMap map(int volume, String job, String status) {
        List<StripeMap.Block> blocks = List.of(new StripeMap.Block("s0", "v" + volume + "-" + job + "-s0-u0", 8, 1),
                new StripeMap.Block("s1", "v" + volume + "-" + job + "-s0-u1", 8, 2),
                new StripeMap.Block("s2", "v" + volume + "-" + job + "-s0-u2", 8, 3));
        return new StripeMap(volume, job, "rs", 2, 1, 8, 16, status, List.of(new StripeMap.Stripe(0, blocks)),
                new StripeMap.IndexBlock("v" + volume + "-" + job + "-index", List.of("s0"), 16, 4));
    }

    private String json(Object o) throws Exception {
        return JSON.writeValueAsString(o);
    }

    @Test
    void deletesAreCountedThenAReclaimIsPlannedSwappedAndRolledBack() throws Exception {
        start(3, false);
        JsonNode a = send("POST", "/v1/assign", "{\"count\": 3}", 200, null);
        int volume = a.get("volume").asInt();
        long k0 = a.get("photos").get(0).get("key").asLong();
        long k1 = a.get("photos").get(1).get("key").asLong();
        long k2 = a.get("photos").get(2).get("key").asLong();
        send("POST", "/v1/commit", "[{\"key\": " + k0 + ", \"alts\": [0, 1]}, {\"key\": " + k1 + ", \"alts\": [0]}]", 204, null);
        // A delete before encoding is not a cold delete.
        send("DELETE", "/v1/photos/" + k2, null, 200, null);
        send("POST", "/v1/volumes/" + volume + "/read-only", "{}", 200, ADMIN);
        assertThat(send("GET", "/v1/volumes/" + volume, null, 200, null).get("deletedPhotos").asLong()).isZero();

        // Reclaim needs an erasure-coded volume.
        assertThat(errorCode("POST", "/v1/volumes/" + volume + "/reclaim?expect=aaaaaaaa", json(map(volume, "bbbbbbbb", "PLANNED")), 409))
                .isEqualTo(206);
        send("POST", "/v1/volumes/" + volume + "/encoding", json(map(volume, "aaaaaaaa", "PLANNED")), 200, ADMIN);
        send("POST", "/v1/volumes/" + volume + "/encoding/commit", json(map(volume, "aaaaaaaa", "PLANNED")), 200, ADMIN);

        // Cold deletes are counted (photos, needles) and persisted with the photo; a second delete counts nothing.
        send("DELETE", "/v1/photos/" + k0, null, 200, null);
        send("DELETE", "/v1/photos/" + k0, null, 200, null);
        JsonNode v = send("GET", "/v1/volumes/" + volume, null, 200, null);
        assertThat(v.get("deletedPhotos").asLong()).isEqualTo(1);
        assertThat(v.get("deletedNeedles").asLong()).isEqualTo(2);

        // dead-keys: the deleted keys; not the live key, nor a key without a per-photo record (a photo written
        // under an allocator lease has none: only its delete-log entry would make it dead, HotPathDirectoryTest).
        JsonNode dead = send("POST", "/v1/volumes/" + volume + "/dead-keys", "{\"keys\": [" + k0 + ", " + k1 + ", " + k2
                + ", 987654321]}", 200, null);
        assertThat(dead.get("dead")).extracting(JsonNode::asLong).containsExactly(k0, k2);

        // Begin: the compare-and-set names the committed job.
        String begin = "/v1/volumes/" + volume + "/reclaim";
        assertThat(errorCode("POST", begin + "?expect=cccccccc", json(map(volume, "bbbbbbbb", "PLANNED")), 409)).isEqualTo(209);
        assertThat(errorCode("POST", begin, json(map(volume, "bbbbbbbb", "PLANNED")), 400)).isEqualTo(1);
        send("POST", begin + "?expect=aaaaaaaa", json(map(volume, "bbbbbbbb", "PLANNED")), 401, null);
        JsonNode plan = send("POST", begin + "?expect=aaaaaaaa", json(map(volume, "bbbbbbbb", "PLANNED")), 200, ADMIN);
        assertThat(plan.get("replaces").asText()).isEqualTo("aaaaaaaa");
        assertThat(plan.get("plan").get("job").asText()).isEqualTo("bbbbbbbb");
        send("POST", begin + "?expect=aaaaaaaa", json(map(volume, "bbbbbbbb", "PLANNED")), 200, ADMIN); // retried
        assertThat(errorCode("POST", begin + "?expect=aaaaaaaa", json(map(volume, "dddddddd", "PLANNED")), 409)).isEqualTo(206);
        assertThat(send("GET", begin, null, 200, null).get("plan").get("job").asText()).isEqualTo("bbbbbbbb");
        assertThat(send("GET", "/v1/reclaims", null, 200, null)).hasSize(1);
        // The committed map is untouched while the reclaim is pending.
        assertThat(send("GET", "/v1/volumes/" + volume + "/stripes", null, 200, null).get("job").asText()).isEqualTo("aaaaaaaa");

        // A delete while pending is kept in the counters after the swap.
        send("DELETE", "/v1/photos/" + k1, null, 200, null);

        // Swap: wrong expectation, wrong job, a block not in the plan → 409; then the real one.
        String commit = begin + "/commit";
        assertThat(errorCode("POST", commit + "?expect=cccccccc", json(map(volume, "bbbbbbbb", "PLANNED")), 409)).isEqualTo(209);
        assertThat(errorCode("POST", commit + "?expect=aaaaaaaa", json(map(volume, "eeeeeeee", "PLANNED")), 409)).isEqualTo(209);
        StripeMap foreign = map(volume, "bbbbbbbb", "PLANNED").withBlock(0, 0, new StripeMap.Block("s0", "elsewhere", 8, 1));
        assertThat(errorCode("POST", commit + "?expect=aaaaaaaa", json(foreign), 409)).isEqualTo(206);
        assertThat(errorCode("POST", "/v1/volumes/" + (volume + 1) + "/reclaim/commit?expect=aaaaaaaa",
                json(map(volume, "bbbbbbbb", "PLANNED")), 400)).isEqualTo(1);
        JsonNode swap = send("POST", commit + "?expect=aaaaaaaa", json(map(volume, "bbbbbbbb", "PLANNED")), 200, ADMIN);
        assertThat(swap.get("replaced").get("job").asText()).isEqualTo("aaaaaaaa");
        assertThat(swap.get("volume").get("deletedPhotos").asLong()).isEqualTo(1);
        assertThat(swap.get("volume").get("deletedNeedles").asLong()).isEqualTo(1);
        JsonNode now = send("GET", "/v1/volumes/" + volume + "/stripes", null, 200, null);
        assertThat(now.get("job").asText()).isEqualTo("bbbbbbbb");
        assertThat(now.get("status").asText()).isEqualTo("COMMITTED");
        assertThat(send("POST", commit + "?expect=aaaaaaaa", json(map(volume, "bbbbbbbb", "PLANNED")), 200, ADMIN)
                .get("replaced").isNull()).isTrue(); // retried
        assertThat(errorCode("GET", begin, null, 404)).isEqualTo(208);
        assertThat(send("GET", "/v1/reclaims", null, 200, null)).isEmpty();

        // Rollback: a wrong job is refused, the right one drops the plan, twice is fine.
        send("POST", begin + "?expect=bbbbbbbb", json(map(volume, "ffffffff", "PLANNED")), 200, ADMIN);
        assertThat(errorCode("DELETE", begin + "?job=12345678", null, 409)).isEqualTo(209);
        send("DELETE", begin + "?job=ffffffff", null, 200, ADMIN);
        send("DELETE", begin + "?job=ffffffff", null, 200, ADMIN);
        assertThat(errorCode("GET", begin, null, 404)).isEqualTo(208);
        assertThat(send("GET", "/v1/volumes/" + volume + "/stripes", null, 200, null).get("job").asText()).isEqualTo("bbbbbbbb");

        // Bad input.
        assertThat(errorCode("GET", "/v1/volumes/9999/reclaim", null, 404)).isEqualTo(203);
        assertThat(errorCode("POST", "/v1/volumes/9999/dead-keys", "{\"keys\": [1]}", 404)).isEqualTo(203);
        assertThat(errorCode("POST", "/v1/volumes/" + volume + "/dead-keys", "{\"keys\": [-4]}", 400)).isEqualTo(1);
        assertThat(errorCode("POST", "/v1/volumes/" + volume + "/dead-keys", "{\"keys\": \"x\"}", 400)).isEqualTo(1);
        assertThat(errorCode("POST", "/v1/volumes/" + volume + "/reclaim?expect=bbbbbbbb", "{not json", 400)).isEqualTo(1);
    }
}
