package io.hayloft.directory;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import io.hayloft.format.wire.StripeMap;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * The operator verbs of a real directory server over HTTP: fail (not undone by autoRestore), drain
 * (DRAINING, its volumes read-only, no new volume there), a replica move (idempotent, refused from a
 * store that holds none), drained (refused while anything is listed there), restore.
 */
class OperatorVerbsApiTest extends DirectoryOverHttp {
    private static List<String> replicas(JsonNode v) {
        List<String> out = new ArrayList<>();
        v.path("replicas").forEach(r -> out.add(r.asText()));
        return out;
    }

    @Test
    void drainMoveDrainedRestoreAndFail() throws Exception {
        start(4, true);
        JsonNode v = send("POST", "/v1/volumes", "{\"count\": 1}", 200, ADMIN).get(0);
        int id = v.path("id").asInt();
        String from = replicas(v).get(0);
        String outside = List.of("s0", "s1", "s2", "s3").stream().filter(s -> !replicas(v).contains(s)).findFirst().orElseThrow();
        send("POST", "/v1/stores/" + from + "/drain", null, 401, null);
        JsonNode s = send("POST", "/v1/stores/" + from + "/drain", null, 200, ADMIN);
        assertThat(s.path("state").asText()).isEqualTo("DRAINING");
        JsonNode ro = send("GET", "/v1/volumes/" + id, null, 200, null);
        assertThat(ro.path("state").asText()).isEqualTo("READ_ONLY");
        assertThat(ro.path("reason").asText()).contains(from).contains("draining");
        JsonNode refused = send("POST", "/v1/stores/" + from + "/drained", null, 409, ADMIN);
        assertThat(refused.path("error").path("message").asText()).contains("replica of volume " + id);
        // no new volume on a draining store (three others remain)
        JsonNode fresh = send("POST", "/v1/volumes", "{\"count\": 1}", 200, ADMIN).get(0);
        assertThat(replicas(fresh)).doesNotContain(from);
        JsonNode notUp = send("POST", "/v1/volumes/" + fresh.path("id").asInt() + "/replicas/move",
                "{\"from\": \"" + replicas(fresh).get(0) + "\", \"to\": \"" + from + "\"}", 409, ADMIN);
        assertThat(notUp.path("error").path("message").asText()).contains("is DRAINING");

        String move = "{\"from\": \"" + from + "\", \"to\": \"" + outside + "\"}";
        JsonNode moved = send("POST", "/v1/volumes/" + id + "/replicas/move", move, 200, ADMIN);
        assertThat(replicas(moved)).doesNotContain(from).contains(outside).hasSize(3);
        assertThat(replicas(moved).indexOf(outside)).isEqualTo(replicas(v).indexOf(from));
        assertThat(send("POST", "/v1/volumes/" + id + "/replicas/move", move, 200, ADMIN)).isEqualTo(moved);
        // from a store that holds no replica, to one that holds none either: nothing to move
        send("POST", "/v1/volumes/" + id + "/replicas/move", "{\"from\": \"" + from + "\", \"to\": \"" + from + "\"}", 409, ADMIN);
        // the fresh volume may also have a replica there: it is writable, sealed by the drain only if it was there
        assertThat(send("POST", "/v1/stores/" + from + "/drained", null, 200, ADMIN).path("state").asText()).isEqualTo("DRAINED");
        assertThat(send("POST", "/v1/stores/" + from + "/drained", null, 200, ADMIN).path("state").asText()).isEqualTo("DRAINED");
        assertThat(send("POST", "/v1/stores/" + from + "/restore", null, 200, ADMIN).path("state").asText()).isEqualTo("UP");

        String victim = replicas(fresh).get(0);
        JsonNode failed = send("POST", "/v1/stores/" + victim + "/fail", "{\"reason\": \"fan\"}", 200, ADMIN);
        assertThat(failed.path("state").asText()).isEqualTo("FAILED");
        assertThat(failed.path("lastError").asText()).isEqualTo("operator: fan");
        assertThat(send("GET", "/v1/volumes/" + fresh.path("id").asInt(), null, 200, null).path("state").asText()).isEqualTo("READ_ONLY");
        // autoRestore brings back a store the health checker failed, not one an operator failed
        directory.directory().probeResult(victim, null, 100);
        JsonNode all = send("GET", "/v1/stores", null, 200, null);
        for (JsonNode st : all) {
            if (st.path("id").asText().equals(victim)) {
                assertThat(st.path("state").asText()).isEqualTo("FAILED");
            }
        }
        directory.directory().probeResult(outside, "refused", 0);
        directory.directory().probeResult(outside, "refused", 0);
        directory.directory().probeResult(outside, "refused", 0);
        directory.directory().probeResult(outside, null, 100);
        for (JsonNode st : send("GET", "/v1/stores", null, 200, null)) {
            if (st.path("id").asText().equals(outside)) {
                assertThat(st.path("state").asText()).isEqualTo("UP");
            }
        }
    }
}
