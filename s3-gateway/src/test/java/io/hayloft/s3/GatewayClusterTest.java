package io.hayloft.s3;

import static org.assertj.core.api.Assertions.assertThat;

import io.hayloft.client.HayloftClient;
import io.hayloft.client.PutResult;
import java.nio.file.Path;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The fixture itself: its cluster takes and serves a photo through the Java client. */
class GatewayClusterTest {
    @TempDir
    Path dir;

    @Test
    void theClusterBehindTheGatewayStoresPhotos() throws Exception {
        try (GatewayCluster c = GatewayCluster.start(dir, Map.of());
             HayloftClient client = HayloftClient.builder().directory(c.directoryAddress()).build()) {
            PutResult r = client.put(new byte[] {1, 2, 3});
            assertThat(client.get(r.id())).containsExactly(1, 2, 3);
            assertThat(c.gateway().port()).isPositive();
        }
    }
}
