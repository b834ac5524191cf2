package io.hayloft.directory.raft;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.fasterxml.jackson.databind.ObjectMapper;
import io.hayloft.directory.Directory;
import io.hayloft.directory.DirectoryConfig;
import io.hayloft.format.directory.VolumeInfo;
import io.hayloft.format.directory.VolumeState;
import io.hayloft.format.errors.ApiException;
import io.hayloft.format.errors.DirectoryErrors;
import io.hayloft.format.wire.Wire;
import io.hayloft.testkit.Await;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.stream.IntStream;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A change whose commit times out may still be applied: the leader keeps it in its log and a majority
 * may take it later. Its caller's latches are released with the timeout answer, so a next change to the
 * same record, computed now, could miss it and be applied after it (a lost update). The leader
 * therefore begins no change while such an entry's fate is open: three replicas in one JVM, both
 * followers stopped so that a seal cannot commit within the 200 ms commit timeout; the next change is
 * refused (NO_LEADER, retry) rather than computed; once the followers are back the entry is either
 * applied on every replica or on none, and changes begin again.
 */
class CommitTimeoutTest {

    private static final ObjectMapper JSON = new ObjectMapper();
    private final HttpClient http = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(2)).build();
    private LocalGroup group;

    @TempDir
    Path dir;

    @AfterEach
    void close() {
        if (group != null) {
            group.close();
        }
    }

    @Test
    void aTimedOutChangeBlocksTheNextUntilItsFateIsKnown() throws Exception {
        group = LocalGroup.builder(3, () -> {
            DirectoryConfig c = new DirectoryConfig();
            c.replication = 2;
            c.minWritableVolumes = 1;
            c.probeIntervalMillis = 100_000;
            c.raft = new DirectoryConfig.Raft();
            // The leader steps down after about twice this without a majority: long enough to see the refusal.
            c.raft.electionTimeoutMillis = 1500;
            c.raft.commitTimeoutMillis = 200;
            return c;
        }, dir).storeAdmin(AcceptingStores.INSTANCE).start();
        int leader = group.awaitLeader(Duration.ofSeconds(30));
        for (int s = 1; s <= 3; s++) {
            HttpResponse<String> r = post(leader, "/v1/heartbeat", new Wire.Heartbeat("s" + s, "127.0.0.1:" + (20000 + s),
                    "rack-" + s, 1L << 40, 1L << 39, List.of()));
            assertThat(r.statusCode()).as(r.body()).isEqualTo(200);
        }
        Directory d = group.server(leader).directory();
        int volume = d.createVolumes(1).get(0).id();

        for (int i = 0; i < 3; i++) {
            if (i != leader) {
                group.stop(i);
            }
        }
        assertThatThrownBy(() -> d.markReadOnly(volume, "cut off"))
                .isInstanceOfSatisfying(ApiException.class, e -> assertThat(e.error()).isEqualTo(DirectoryErrors.NO_LEADER))
                .hasMessageContaining("may still be applied later");
        assertThat(group.server(leader).directory().log().leads()).as("still the leader: the refusal below is the guard's").isTrue();
        assertThatThrownBy(() -> d.markReadOnly(volume, "computed without the first"))
                .isInstanceOfSatisfying(ApiException.class, e -> assertThat(e.error()).isEqualTo(DirectoryErrors.NO_LEADER))
                .hasMessageContaining("timed out and may still be applied");

        for (int i = 0; i < 3; i++) {
            group.start(i);
        }
        Await.until("a leader begins changes again", Duration.ofSeconds(30), () -> {
            try {
                group.server(group.leader()).directory().log().begin();
                return true;
            } catch (RuntimeException e) {
                return false;
            }
        });
        int now = group.leader();
        VolumeInfo after = group.server(now).directory().markReadOnly(volume, "after");
        assertThat(after.state()).isEqualTo(VolumeState.READ_ONLY);
        Await.until("every replica holds the volume as the leader does", () -> IntStream.range(0, 3)
                .mapToObj(i -> group.server(i).directory().meta().volume(volume))
                .allMatch(v -> v != null && v.equals(group.server(now).directory().meta().volume(volume))));
        assertThat(after.reason()).as("the seal that timed out was applied once, everywhere, or nowhere")
                .isIn("cut off", "after");
    }

    private HttpResponse<String> post(int i, String path, Object body) throws Exception {
        return http.send(HttpRequest.newBuilder(URI.create("http://" + group.address(i) + path))
                .POST(HttpRequest.BodyPublishers.ofByteArray(JSON.writeValueAsBytes(body))).build(), HttpResponse.BodyHandlers.ofString());
    }
}
