package io.hayloft.directory;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import io.hayloft.format.wire.StripeMap;
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

    /** Appends one entry for {@code key} to the volume's delete log ({@code POST /v1/volumes/{id}/deletes}). */
    private JsonNode logDelete(int volume, long key, int needles) throws Exception {
        return send("POST", "/v1/volumes/" + volume + "/deletes", "{\"deletes\": [{\"seq\": 0, \"key\": " + key
                + ", \"cookie\": \"abcdef\", \"needles\": " + needles + "}]}", 200, null);
    }

    private String json(Object o) throws Exception {
        return JSON.writeValueAsString(o);
    }

    @Test
    void deletesAreCountedThenAReclaimIsPlannedSwappedAndRolledBack() throws Exception {
        start(3, false);
        JsonNode a = send("POST", "/v1/leases", "{\"keys\": 3}", 200, null);
        int volume = a.get("volume").asInt();
        long k0 = a.get("first").asLong();
        long k1 = k0 + 1;
        long k2 = k0 + 2;
        // A delete before encoding is not a cold delete.
        logDelete(volume, k2, 1);
        send("POST", "/v1/volumes/" + volume + "/read-only", "{}", 200, ADMIN);
        assertThat(send("GET", "/v1/volumes/" + volume, null, 200, null).get("deletedPhotos").asLong()).isZero();

        // Reclaim needs an erasure-coded volume.
        assertThat(errorCode("POST", "/v1/volumes/" + volume + "/reclaim?expect=aaaaaaaa", json(map(volume, "bbbbbbbb", "PLANNED")), 409))
                .isEqualTo(206);
        send("POST", "/v1/volumes/" + volume + "/encoding", json(map(volume, "aaaaaaaa", "PLANNED")), 200, ADMIN);
        send("POST", "/v1/volumes/" + volume + "/encoding/commit", json(map(volume, "aaaaaaaa", "PLANNED")), 200, ADMIN);

        // Cold deletes are counted (photos, needles) in the batch of their delete-log entry; a second delete of
        // the key returns its first entry and counts nothing.
        assertThat(logDelete(volume, k0, 2).get("entries").get(0).get("seq").asLong()).isEqualTo(2);
        assertThat(logDelete(volume, k0, 2).get("entries").get(0).get("seq").asLong()).isEqualTo(2);
        JsonNode v = send("GET", "/v1/volumes/" + volume, null, 200, null);
        assertThat(v.get("deletedPhotos").asLong()).isEqualTo(1);
        assertThat(v.get("deletedNeedles").asLong()).isEqualTo(2);

        // dead-keys: exactly the keys in the volume's delete log; a key never deleted (or never written) is live.
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
        logDelete(volume, k1, 1);

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
